//! `functionary_v3_2`'s completeness check (issue 21, item 7): the schema's root pattern is
//! anchored at the start only and every part of it is optional, so the schema alone (the
//! reference, `recursive_parse` in transformers 5.10.4) returns a message without text the model
//! wrote: text without a recipient, text after a `>>>all\n` that follows the calls, a recipient
//! cut at the end of the output. The shipped name refuses it (strict) or sets it aside
//! (lenient), in the interpreter, the generated parser and the streams alike.

mod support;

use chatparse::runtime::schema::Check;
use chatparse::{ParseErrorKind, Value};
use proptest::prelude::*;
use support::Rng;

const NAME: &str = "functionary_v3_2";

fn spec() -> chatparse::runtime::Spec {
    chatparse::shipped::spec(NAME).unwrap().unwrap()
}

/// The outputs the schema alone answers with a message that leaves text out: (output, the part
/// the check names, how its explanation starts, its field, the message of transformers 5.10.4's
/// `recursive_parse` with `schemas/functionary_v3_2.json`, pinned from a run of it).
const LOSSES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "Hello! How can I help you today?",
        "Hello! How can I help you today?",
        "text without a recipient",
        "content",
        r#"{"role": "assistant"}"#,
    ),
    (
        "all Hello",
        "all Hello",
        "text without a recipient",
        "content",
        r#"{"role": "assistant"}"#,
    ),
    (
        "Hello<|eot_id|>more",
        "Hello",
        "text without a recipient",
        "content",
        r#"{"role": "assistant"}"#,
    ),
    (
        "get_time\n{}>>>all\nThe answer",
        "The answer",
        "text after the message's text and calls",
        "content",
        r#"{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_time", "arguments": {}}}]}"#,
    ),
    (
        "get_time\n{}>>>all\n  Done. \n<|eot_id|>tail",
        "Done.",
        "text after the message's text and calls",
        "content",
        r#"{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_time", "arguments": {}}}]}"#,
    ),
    (
        "get_time\n{}>>>all\nA>>>all\nB<|eot_id|>",
        "A>>>all\nB",
        "text after the message's text and calls",
        "content",
        r#"{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_time", "arguments": {}}}]}"#,
    ),
    (
        "all\nSure.>>>a\n{}\n>>>all\nDone.<|eot_id|>",
        "Done.",
        "text after the message's text and calls",
        "content",
        r#"{"role": "assistant", "content": "Sure.", "tool_calls": [{"type": "function", "function": {"name": "a", "arguments": {}}}]}"#,
    ),
    (
        "all\nHi>>>x",
        "x",
        "a recipient cut at the end of the output",
        "tool_calls",
        r#"{"role": "assistant", "content": "Hi"}"#,
    ),
    (
        "all\nLet me check.>>>get_wea",
        "get_wea",
        "a recipient cut at the end of the output",
        "tool_calls",
        r#"{"role": "assistant", "content": "Let me check."}"#,
    ),
    (
        "get_time\n{}>>>get_wea",
        "get_wea",
        "a recipient cut at the end of the output",
        "tool_calls",
        r#"{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_time", "arguments": {}}}]}"#,
    ),
    (
        "all\nHi>>>>get_wea",
        "get_wea",
        "a recipient cut at the end of the output",
        "tool_calls",
        r#"{"role": "assistant", "content": "Hi>"}"#,
    ),
    (
        "get_time",
        "get_time",
        "a recipient cut at the end of the output",
        "tool_calls",
        r#"{"role": "assistant"}"#,
    ),
];

/// Each loss is a typed error naming the part and where it is; the generated parser and the
/// strict stream (in one piece and a character at a time) fail the same; lenient parsing keeps
/// the schema's message and sets the part aside with its exact text and span, and the lenient
/// stream ends the same.
#[test]
fn losses_fail_strictly_and_are_set_aside_leniently() {
    let spec = spec();
    let schema = spec.schema().unwrap();
    for &(input, part, what, field, reference) in LOSSES {
        let reference: Value = chatparse::value::from_str(reference).unwrap();
        // The schema alone is the reference's.
        assert_eq!(
            schema.parse_schema_only(input).unwrap(),
            reference,
            "{input:?}"
        );
        let at = input.find(part).unwrap();
        let span = (at, at + part.len());
        let e = spec.parse(input).unwrap_err();
        match &e.kind {
            ParseErrorKind::NotUnderstood { what: w, span: s } => {
                assert!(w.starts_with(what), "{input:?}: {w}");
                assert_eq!(*s, span, "{input:?}");
            }
            other => panic!("{input:?}: {other:?}"),
        }
        assert_eq!(e.pointer, format!("/properties/{field}"), "{input:?}");
        assert_eq!(e.position.unwrap().offset, at);
        let generated = chatparse::models::functionary_v3_2::parse_value(input).unwrap_err();
        assert_eq!(generated, e, "{input:?}");
        assert_eq!(strict_stream(&spec, input, &[]).unwrap_err(), e);
        let every_char: Vec<usize> = support::char_boundaries(input)[1..].to_vec();
        assert_eq!(strict_stream(&spec, input, &every_char).unwrap_err(), e);
        let lenient = spec.parse_lenient(input, None).unwrap();
        assert_eq!(lenient.message, reference, "{input:?}");
        assert_eq!(lenient.malformed.len(), 1, "{input:?}: {lenient:?}");
        let m = &lenient.malformed[0];
        assert_eq!((m.text.as_str(), m.span), (part, Some(span)), "{input:?}");
        assert_eq!(m.field.as_deref(), Some(field));
        assert_eq!(lenient_stream(&spec, input, &every_char), lenient.message);
    }
}

/// A second `>>>all\n` block after the text: the schema (transformers 5.10.4's `recursive_parse`,
/// pinned from a run of it) reads it as a call named `all`, a recipient the template writes for
/// the text only. Strict parsing refuses it; lenient parsing leaves that call out, sets its text
/// aside, and keeps the other calls.
#[test]
fn a_second_all_block_read_as_a_call_is_refused() {
    let spec = spec();
    let schema = spec.schema().unwrap();
    let cases = [
        (
            "all\nA>>>all\n{}",
            "all\n{}",
            r#"{"role": "assistant", "content": "A", "tool_calls": [{"type": "function", "function": {"name": "all", "arguments": {}}}]}"#,
            // The calls' array stays, empty, as when lenient parsing sets aside any call.
            r#"{"role": "assistant", "content": "A", "tool_calls": []}"#,
        ),
        (
            "all\nA>>>all\n{\"x\": 1}>>>g\n{}<|eot_id|>",
            "all\n{\"x\": 1}",
            r#"{"role": "assistant", "content": "A", "tool_calls": [{"type": "function", "function": {"name": "all", "arguments": {"x": 1}}}, {"type": "function", "function": {"name": "g", "arguments": {}}}]}"#,
            r#"{"role": "assistant", "content": "A", "tool_calls": [{"type": "function", "function": {"name": "g", "arguments": {}}}]}"#,
        ),
    ];
    for (input, part, reference, kept) in cases {
        let reference: Value = chatparse::value::from_str(reference).unwrap();
        assert_eq!(schema.parse_schema_only(input).unwrap(), reference);
        let at = input.find(part).unwrap();
        let e = spec.parse(input).unwrap_err();
        match &e.kind {
            ParseErrorKind::NotUnderstood { what, span } => {
                assert!(what.starts_with("a second `>>>all` block"), "{what}");
                assert_eq!(*span, (at, at + part.len()));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            chatparse::models::functionary_v3_2::parse_value(input).unwrap_err(),
            e
        );
        let every_char: Vec<usize> = support::char_boundaries(input)[1..].to_vec();
        assert_eq!(strict_stream(&spec, input, &every_char).unwrap_err(), e);
        let lenient = spec.parse_lenient(input, None).unwrap();
        let kept: Value = chatparse::value::from_str(kept).unwrap();
        assert_eq!(lenient.message, kept, "{input:?}");
        assert_eq!(lenient.malformed.len(), 1, "{lenient:?}");
        assert_eq!(lenient.malformed[0].text, part);
        assert_eq!(lenient.malformed[0].span, Some((at, at + part.len())));
        assert_eq!(lenient_stream(&spec, input, &every_char), kept);
    }
}

/// What MeetKai's template writes (rendered with jinja2 from
/// `chat_templates/meetkai-functionary-medium-v3.2.jinja`, the assistant turn after the
/// generation prompt's `>>>`), and outputs whose parts outside the message are markup, white space
/// or after the end token: accepted, the message the schema's.
#[test]
fn what_the_template_writes_and_markup_are_accepted() {
    let spec = spec();
    let schema = spec.schema().unwrap();
    let accepted = [
        // Rendered: content only; content and two calls; one call.
        "all\nIt is sunny in Kyoto.<|eot_id|>",
        "all\nLet me check.>>>get_weather\n{\"city\": \"Kyoto\"}>>>get_time\n{}<|eot_id|>",
        "get_time\n{\"tz\": \"UTC\"}<|eot_id|>",
        // Markup only outside the message: a cut `all` recipient or `>>>`, an empty `all`
        // block after the calls, white space, the model's own first `>>>`.
        "get_time\n{}>>>all",
        "get_time\n{}>>>al",
        "all\nHi>>>",
        "get_time\n{}\n>>>all\n \n<|eot_id|>",
        "all\n",
        "all",
        "",
        " \n ",
        "  >>>all\nHi>>>f\n{\"a\": 1}\n<|eot_id|>",
        // After the end token, as in every family.
        "all\nDone.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nmore<|eot_id|>",
        "get_time\n{}<|eot_id|>more",
        // `>>>` inside the text, read as text.
        "all\nIn Python:\n>>> 1 + 1\n2<|eot_id|>",
        "all\nHi>>>x y",
    ];
    for input in accepted {
        let message = spec.parse(input);
        assert_eq!(
            message.as_ref().ok(),
            schema.parse_schema_only(input).as_ref().ok(),
            "{input:?}: {message:?}"
        );
        assert!(Check::FunctionaryV3_2.unread(schema, input).is_empty());
        assert_eq!(
            chatparse::models::functionary_v3_2::parse_value(input),
            message
        );
    }
}

/// The stream's final message (or error) fed in pieces cut at `cuts`.
fn strict_stream(
    spec: &chatparse::runtime::Spec,
    input: &str,
    cuts: &[usize],
) -> Result<Value, chatparse::ParseError> {
    let mut stream = spec.stream(None, None).unwrap();
    let mut at = 0;
    for &cut in cuts.iter().chain([&input.len()]) {
        stream.feed_with(&input[at..cut], &mut |_| {})?;
        at = cut;
    }
    stream.finish_with(&mut |_| {})
}

/// The lenient stream's final message fed in pieces cut at `cuts`.
fn lenient_stream(spec: &chatparse::runtime::Spec, input: &str, cuts: &[usize]) -> Value {
    let mut stream = spec.stream_lenient(None, None).unwrap();
    let mut at = 0;
    for &cut in cuts.iter().chain([&input.len()]) {
        stream.feed_with(&input[at..cut], &mut |_| {}).unwrap();
        at = cut;
    }
    stream.finish_with(&mut |_| {}).unwrap()
}

/// One piece of a generated output; each word in it is unique (`zqNq`), so where it is and
/// whether the message holds it is known without the check.
#[derive(Debug, Clone, Copy)]
enum Piece {
    /// `all\n` and text (a `>>>` before it unless it opens the output).
    Content(u8),
    /// `NAME\n{"a": "WORD"}` (a `>>>` before it unless it opens the output).
    Call(u8),
    /// Text written without a recipient, right after what came before or after a `>>>`.
    Plain(u8),
    /// `>>>` and a name, nothing after it: a cut recipient when it ends the output.
    Cut,
    /// Markup: `>>>all` cut, `>>>`, `>>>al` cut, `>>>all \t\r\n`.
    Markup(u8),
    /// White space.
    Space(u8),
    /// `<|eot_id|>` and a word after it, which every family drops.
    End,
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        3 => (0u8..8).prop_map(Piece::Content),
        4 => (0u8..6).prop_map(Piece::Call),
        2 => (0u8..6).prop_map(Piece::Plain),
        2 => Just(Piece::Cut),
        1 => (0u8..4).prop_map(Piece::Markup),
        1 => (0u8..4).prop_map(Piece::Space),
        1 => Just(Piece::End),
    ]
}

/// The output of `pieces`, and its words with where each starts and whether it follows the end
/// token (and may be dropped).
fn render(pieces: &[Piece]) -> (String, Vec<(String, usize, bool)>) {
    let mut out = String::new();
    let mut words = Vec::new();
    let mut ended = false;
    let mut word = |out: &mut String, ended: bool| {
        let w = format!("zq{}q", words.len());
        words.push((w.clone(), out.len(), ended));
        out.push_str(&w);
    };
    for (i, piece) in pieces.iter().enumerate() {
        let mark = |out: &mut String| {
            if i > 0 {
                out.push_str(">>>");
            }
        };
        match *piece {
            Piece::Content(v) => {
                mark(&mut out);
                out.push_str(["all\n", "all \t\r\n", "all\n\n "][usize::from(v % 3)]);
                word(&mut out, ended);
                out.push_str([" ", "\n", " >>> ", ">>", "! "][usize::from(v % 5)]);
                word(&mut out, ended);
            }
            Piece::Call(v) => {
                mark(&mut out);
                word(&mut out, ended);
                out.push_str(["\n", " \t\r\n"][usize::from(v % 2)]);
                out.push_str("{\"a\": \"");
                word(&mut out, ended);
                out.push_str("\"}");
                out.push_str(["", "\n", " "][usize::from(v % 3)]);
            }
            Piece::Plain(v) => {
                out.push_str(["", ">>>", " ", "\n"][usize::from(v % 4)]);
                word(&mut out, ended);
                if v >= 3 {
                    out.push(' ');
                    word(&mut out, ended);
                }
            }
            Piece::Cut => {
                out.push_str(">>>");
                word(&mut out, ended);
            }
            Piece::Markup(v) => {
                // A recipient without its newline is cut: only where the turn ends (at the end
                // of the output or before `<|eot_id|>`); elsewhere the `all` header.
                let turn_ends = matches!(pieces.get(i + 1), None | Some(Piece::End));
                let v = if turn_ends { v } else { 3 };
                out.push_str([">>>all", ">>>", ">>>al", ">>>all \t\r\n"][usize::from(v)]);
            }
            Piece::Space(v) => out.push_str([" ", "\n", "\r\n", " \n\t"][usize::from(v)]),
            Piece::End => {
                out.push_str("<|eot_id|>");
                ended = true;
                word(&mut out, ended);
            }
        }
    }
    (out, words)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// On outputs mixing calls, `all\n` content, text without a recipient, cut recipients,
    /// markup and end tokens: every word before the end token is in the message or in a part
    /// lenient parsing sets aside; the strict parse succeeds only when nothing is
    /// set aside, so a message never lacks a word; every part the check names holds a word the
    /// schema's message lacks. The generated parser answers as the interpreter does, and the
    /// streams, cut at random, end as the one-shot parses.
    #[test]
    fn every_word_is_in_the_message_or_named(
        pieces in proptest::collection::vec(piece(), 0..7),
        seed in any::<u64>(),
    ) {
        let spec = spec();
        let schema = spec.schema().unwrap();
        let (input, words) = render(&pieces);
        let strict = spec.parse(&input);
        let lenient = spec.parse_lenient(&input, None).unwrap();
        let message = lenient.message.to_string();
        for (word, at, after_end) in &words {
            if *after_end {
                continue;
            }
            // A part set aside is found at its span, or by its text where the root
            // substitution rewrote the output before it (the part is a piece of the rewrite).
            let kept = message.contains(word.as_str())
                || lenient.malformed.iter().any(|m| match m.span {
                    Some((a, b)) => a <= *at && at + word.len() <= b,
                    None => m.text.contains(word.as_str()),
                });
            prop_assert!(kept, "{input:?}: {word} lost: {lenient:?}");
        }
        for m in &lenient.malformed {
            if let Some((a, b)) = m.span {
                prop_assert_eq!(input.get(a..b), Some(m.text.as_str()));
            }
        }
        prop_assert_eq!(strict.is_ok(), lenient.malformed.is_empty(), "{:?}: {:?}", input, strict);
        if let Ok(m) = &strict {
            prop_assert_eq!(m, &lenient.message);
        }
        if let Ok(alone) = schema.parse_schema_only(&input) {
            let alone = alone.to_string();
            for u in Check::FunctionaryV3_2.unread(schema, &input) {
                let (a, b) = u.span;
                let holds_lost_word = words.iter().any(|(w, at, _)| {
                    a <= *at && at + w.len() <= b && !alone.contains(w.as_str())
                });
                prop_assert!(holds_lost_word, "{input:?}: names {:?} ({})", &input[a..b], u.what);
            }
        }
        // The generated parser: the same message or error. Known apart from this check: where
        // the schema's own JSON error is, the generated parser does not always say (`position`
        // None where the interpreter has it, after `>>>all \t\r\n>>>all \t\r\n`), so a schema
        // error is compared without its position.
        let generated = chatparse::models::functionary_v3_2::parse_value(&input);
        let without_position = |r: &Result<Value, chatparse::ParseError>| {
            r.clone().map_err(|mut e| {
                if !matches!(e.kind, ParseErrorKind::NotUnderstood { .. }) {
                    e.position = None;
                }
                e
            })
        };
        prop_assert_eq!(without_position(&generated), without_position(&strict), "{:?}", input);
        let mut rng = Rng::new(seed);
        let cuts = support::random_cuts(&input, &mut rng);
        prop_assert_eq!(&strict_stream(&spec, &input, &cuts), &strict, "{:?} cut at {:?}", input, cuts);
        prop_assert_eq!(lenient_stream(&spec, &input, &cuts), lenient.message, "{:?}", input);
    }
}

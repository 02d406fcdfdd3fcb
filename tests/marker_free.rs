//! The generated parsers' marker-free answer (`parse_marker_free`, proven at build time by
//! `chatparse-codegen`'s `marker_free.rs`) against the interpreter with every fast path turned off
//! (`Schema::disable_fast_paths`: each pattern on the regex engines): on marker-free and
//! near-marker outputs, the same message, or the same error (text and position) — with the
//! family's completeness check and without it.
//!
//! The expectation is the interpreter's, which the conformance suite pins to the reference; the
//! fast path is only ever compared with it, never with itself.

mod support;

use chatparse::models::{GENERATED, GENERATED_SCHEMA_ONLY, MARKER_FREE};
use proptest::test_runner::{Config, TestRunner};
use support::{delimiters, same_value};

/// The tiny message of the benchmarks (BENCHMARKS.md).
const TINY: &str = "Hello! How can I help you today?";

/// White space as Python's `\s` sees it and near it: ASCII, the separators `\x1c`–`\x1f`,
/// NEL, NBSP, the ideographic space, and two characters that are not white space (ZWSP, BOM).
const SPACES: &[&str] = &[
    "",
    " ",
    "\n",
    "\r\n",
    "\t",
    "\x0b\x0c",
    "\x1c\x1d\x1e\x1f",
    "\u{85}",
    "\u{a0}",
    "\u{2028}",
    "\u{3000}",
    "\u{200b}",
    "\u{feff}",
    "\0",
    " \n\t\u{3000} ",
];

/// Recipient headers (functionary v3.2) in front of a body: `all\n` and near misses.
const HEADS: &[&str] = &[
    "all\n", "all \n", "all\r\n", "all\n\n", "all\n ", "all", "all ", "alll\n", "al\n", "ALL\n",
    "f\n",
];

/// Bodies without markers, and with single characters markers start with.
const BODIES: &[&str] = &[
    TINY,
    "",
    "x",
    "a\nb",
    "a\r\nb c",
    "<",
    ">",
    "<b>bold</b>",
    "a < b > c",
    "[",
    "[x] {y}",
    "{\"name\": \"f\", \"arguments\": {}}",
    "Here are my steps",
    "functools",
    "to=functions",
    "Zürich 東京 🙂",
    "\0nul\0",
    "$^.*?",
];

/// Marker-free and near-marker outputs for a schema: every body between every pair of white
/// spaces, and each of the schema's literals cut short (all but its last character, its first
/// character, its first two) and whole, at the start, middle and end of the tiny message.
fn inputs(schema_text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for body in BODIES {
        for lead in SPACES {
            for trail in SPACES {
                out.push(format!("{lead}{body}{trail}"));
            }
            // Functionary v3.2's plain answer starts with its `all` recipient; a head that is
            // almost it must not take its answer.
            for head in HEADS {
                for trail in ["", "\n", " \n\t\u{3000} "] {
                    out.push(format!("{lead}{head}{body}{trail}"));
                }
            }
        }
    }
    for literal in delimiters(schema_text) {
        let chars: Vec<char> = literal.chars().collect();
        let mut pieces = vec![literal.clone()];
        for n in [1, 2, chars.len().saturating_sub(1)] {
            if n > 0 && n < chars.len() {
                pieces.push(chars[..n].iter().collect());
            }
        }
        pieces.push(chars.iter().rev().collect());
        for piece in pieces {
            out.push(piece.clone());
            out.push(format!("{piece}{TINY}"));
            out.push(format!("Hello! {piece} How can I help?"));
            out.push(format!("{TINY}{piece}"));
            out.push(format!("  {piece}\n"));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Results equal as values, or errors equal in kind and pointer; and when the marker-free path
/// answered (`exact`), in text and position too. (Off that path the generated parser may place a
/// schema error elsewhere than the interpreter, as `tests/equivalence.rs` allows.)
fn same(
    a: &Result<chatparse::Value, chatparse::ParseError>,
    b: &Result<chatparse::Value, chatparse::ParseError>,
    exact: bool,
) -> bool {
    match (a, b) {
        (Ok(a), Ok(b)) => same_value(a, b),
        (Err(a), Err(b)) if exact => a == b && a.to_string() == b.to_string(),
        (Err(a), Err(b)) => a.kind == b.kind && a.pointer == b.pointer,
        _ => false,
    }
}

/// One shipped schema's two interpreters — the shipped schema (with its check) and the schema
/// alone, each with every fast path off — and its two generated parsers.
struct Subject {
    name: &'static str,
    checked: chatparse::Schema,
    alone: chatparse::Schema,
    parse: chatparse::models::ParseToJson,
    schema_only: chatparse::models::ParseToJson,
    marker_free: chatparse::models::TakesMarkerFreePath,
}

impl Subject {
    fn new(name: &'static str) -> Subject {
        let mut checked = chatparse::shipped::schema(name).unwrap();
        checked.disable_fast_paths();
        let mut alone =
            chatparse::Schema::from_json_str(chatparse::shipped::text(name).unwrap()).unwrap();
        alone.disable_fast_paths();
        let find = |table: &[(&str, chatparse::models::ParseToJson)]| {
            table.iter().find(|(n, _)| *n == name).unwrap().1
        };
        Subject {
            name,
            checked,
            alone,
            parse: find(GENERATED),
            schema_only: find(GENERATED_SCHEMA_ONLY),
            marker_free: MARKER_FREE.iter().find(|(n, _)| *n == name).unwrap().1,
        }
    }

    fn compare(&self, input: &str) -> Result<(), String> {
        let (want_checked, got_checked) = (self.checked.parse(input), (self.parse)(input));
        let (want_alone, got_alone) = (self.alone.parse(input), (self.schema_only)(input));
        let exact = (self.marker_free)(input);
        if same(&want_checked, &got_checked, exact) && same(&want_alone, &got_alone, exact) {
            return Ok(());
        }
        Err(format!(
            "{} on {input:?}:\n  checked: interpreter {want_checked:?}\n           generated \
             {got_checked:?}\n  schema only: interpreter {want_alone:?}\n               \
             generated {got_alone:?}",
            self.name
        ))
    }
}

#[test]
fn marker_free_answers_are_the_interpreters() {
    let mut failures = Vec::new();
    let mut answered = 0usize;
    for (name, marker_free) in MARKER_FREE {
        let subject = Subject::new(name);
        let text = chatparse::shipped::text(name).unwrap();
        for input in inputs(text) {
            answered += usize::from(marker_free(&input));
            if let Err(e) = subject.compare(&input) {
                failures.push(e);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreements, first:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n")
    );
    // The comparison is about the fast path: most of these inputs must have taken it.
    assert!(
        answered > 10_000,
        "only {answered} inputs took the marker-free path"
    );
}

/// Random text from each schema's own pieces, white space and single characters (as
/// `tests/equivalence_proptest.rs` builds them, with fewer whole markers): the same answers.
#[test]
fn marker_free_answers_agree_on_random_text() {
    use proptest::prelude::*;
    for (name, _) in MARKER_FREE {
        let subject = Subject::new(name);
        let text = chatparse::shipped::text(name).unwrap();
        let cut: Vec<String> = delimiters(text)
            .into_iter()
            .map(|d| d.chars().take(d.chars().count().max(2) - 1).collect())
            .collect();
        let piece = prop_oneof![
            1 => proptest::sample::select(HEADS).prop_map(str::to_owned),
            3 => proptest::sample::select(cut),
            3 => proptest::sample::select(SPACES).prop_map(str::to_owned),
            3 => "[a-zA-Z<>\\[\\]{}|=:!?. ]{0,8}".prop_map(String::from),
            1 => any::<String>().prop_map(|s| s.chars().take(4).collect::<String>()),
        ];
        let strategy = proptest::collection::vec(piece, 0..10).prop_map(|v| v.concat());
        let mut runner = TestRunner::new(Config {
            cases: 1_000,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&strategy, |input| {
            subject.compare(&input).map_err(TestCaseError::fail)
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}

/// Which schemas answer the tiny message without any pattern: every schema but functionary
/// v3.2, whose substitution puts `>>>` in front of every message, where its root pattern reads
/// a call when a line break follows the first word, and whose check refuses text without a
/// recipient (its marker-free answer covers its plain answer `all\n…`: the next test). A schema
/// leaving the list (a changed pattern, a weaker analysis) is a performance regression to look
/// at, not a wrong answer.
#[test]
fn the_tiny_message_takes_the_marker_free_path() {
    let not_taken: Vec<&str> = MARKER_FREE
        .iter()
        .filter(|(_, marker_free)| !marker_free(TINY))
        .map(|(name, _)| *name)
        .collect();
    assert_eq!(not_taken, ["functionary_v3_2"]);
}

/// Functionary v3.2's own plain answer (its template writes `>>>all\n` and the text; the prompt
/// ends with the `>>>`, and a server strips the `<|eot_id|>`) takes the marker-free path, with
/// the interpreter's message; a call, or text without the recipient, does not.
#[test]
fn functionary_v3_2s_plain_answer_takes_the_marker_free_path() {
    let subject = Subject::new("functionary_v3_2");
    let example = std::fs::read_to_string(
        support::repo_root().join("examples/functionary_v3_2/plain_answer.txt"),
    )
    .unwrap();
    let answer = example.strip_suffix("<|eot_id|>").unwrap();
    assert!(answer.starts_with("all\n"));
    for text in [
        answer,
        "all\nHi",
        " all\nTwo\nlines.\n",
        &format!("all\n{TINY}"),
    ] {
        assert!((subject.marker_free)(text), "{text:?}");
        subject.compare(text).unwrap();
    }
    let message = chatparse::models::functionary_v3_2::parse(answer)
        .unwrap()
        .unwrap();
    assert_eq!(message.content.as_deref(), Some(&answer[4..]));
    for text in [TINY, "all\n", "all Hi", "get_weather\n{}", "all\n>>>f\n{}"] {
        assert!(!(subject.marker_free)(text), "{text:?}");
        subject.compare(text).unwrap();
    }
}

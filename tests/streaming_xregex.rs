//! Streaming x-regex response schemas (`XRegexPlan`, `XRegexStreamParser`): which shipped schemas
//! stream, and for those (and every conformance suite whose schema streams) chunking invariance:
//! the streamed message equals the one-shot interpreter's for every split point of short inputs
//! and many seeded random chunkings of long ones, and each region's concatenated `region_chunk`
//! text equals the text the schema's regex captures for it.

mod support;

use chatparse::runtime::stream::{Event, XRegexPlan, XRegexStreamParser};
use chatparse::Schema;
use chatparse::Value;
use support::{
    char_boundaries, delimiters, load_suites, preview, random_cuts, repo_root, same_value, Rng,
};

/// The shipped x-regex schemas that stream.
const STREAMABLE: &[&str] = &["cohere_command_r7b", "gpt_oss"];

struct Streamed {
    message: Result<Value, String>,
    /// Per field, the text of each region (open to close), in order.
    regions: Vec<(String, String)>,
}

fn stream(plan: &XRegexPlan, input: &str, cuts: &[usize]) -> Streamed {
    let mut parser = XRegexStreamParser::new(plan);
    let mut open: Vec<(String, String)> = Vec::new();
    let mut regions = Vec::new();
    let mut on = |e: Event<'_>| match e {
        Event::RegionOpen { field } => open.push((field.to_owned(), String::new())),
        Event::RegionChunk { field, text, .. } => {
            let slot = open
                .iter_mut()
                .find(|(f, _)| f == field)
                .expect("chunk inside an open region");
            slot.1.push_str(&text);
        }
        Event::RegionClose { field, .. } => {
            let at = open
                .iter()
                .position(|(f, _)| f == field)
                .expect("close of an open region");
            regions.push(open.remove(at));
        }
        other => panic!("a strict stream sent {other:?}"),
    };
    let mut last = 0;
    for &cut in cuts {
        match parser.feed(&input[last..cut]) {
            Ok(events) => events.into_iter().for_each(&mut on),
            Err(e) => {
                return Streamed {
                    message: Err(e.to_string()),
                    regions,
                }
            }
        }
        last = cut;
    }
    let message = match parser.finish() {
        Ok((message, events)) => {
            events.into_iter().for_each(&mut on);
            assert!(open.is_empty(), "regions left open after finish: {open:?}");
            Ok(message)
        }
        Err(e) => Err(e.to_string()),
    };
    Streamed { message, regions }
}

/// The regions the one-shot regexes find: per root property with `x-regex`/`x-regex-iterator`,
/// group 1 of each match, ordered like the streamed regions (by field, then by match).
fn expected_regions(schema: &Schema, input: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for prop in schema.root().properties.as_deref().unwrap_or_default() {
        if let Some(p) = &prop.node.regex {
            if let Some(caps) = p.regex.search(input).unwrap() {
                out.push((prop.name.clone(), caps.get(1).unwrap().to_owned()));
            }
        } else if let Some(p) = &prop.node.iterator {
            for caps in p.regex.find_iter(input) {
                out.push((prop.name.clone(), caps.unwrap().get(1).unwrap().to_owned()));
            }
        }
    }
    out
}

fn sorted_by_field(mut v: Vec<(String, String)>, schema: &Schema) -> Vec<(String, String)> {
    let order = |name: &str| {
        schema
            .root()
            .properties
            .as_deref()
            .unwrap_or_default()
            .iter()
            .position(|p| p.name == name)
    };
    v.sort_by_key(|(f, _)| order(f)); // stable: matches stay in order within a field
    v
}

/// Checks one input under `chunkings`; returns a failure description.
fn check(
    name: &str,
    schema: &Schema,
    plan: &XRegexPlan,
    input: &str,
    chunkings: &[Vec<usize>],
) -> Option<String> {
    let one_shot = schema.parse(input);
    let want_regions = one_shot.is_ok().then(|| expected_regions(schema, input));
    for cuts in chunkings {
        let got = stream(plan, input, cuts);
        let agree = match (&one_shot, &got.message) {
            (Ok(a), Ok(b)) => same_value(a, b),
            (Err(_), Err(_)) => true,
            _ => false,
        };
        if !agree {
            return Some(format!(
                "[{name}] input {} cuts {cuts:?}\n    one-shot {:?}\n    streamed {:?}",
                preview(input),
                one_shot.as_ref().map(Value::to_string),
                got.message
            ));
        }
        if let Some(want) = &want_regions {
            let got_regions = sorted_by_field(got.regions, schema);
            if &got_regions != want {
                return Some(format!(
                    "[{name}] input {} cuts {cuts:?}\n    regions {got_regions:?}\n    captures {want:?}",
                    preview(input)
                ));
            }
        }
    }
    None
}

/// Every split point for short inputs (plus one char per chunk), seeded random chunkings for
/// long ones.
fn chunkings(input: &str, rng: &mut Rng, random: usize) -> Vec<Vec<usize>> {
    let bounds = char_boundaries(input);
    let mut all = vec![vec![input.len()]];
    if input.len() <= 400 {
        for &b in &bounds {
            all.push(vec![b, input.len()]);
        }
        all.push(bounds.iter().copied().skip(1).collect());
    } else {
        for _ in 0..random {
            all.push(random_cuts(input, rng));
        }
    }
    all
}

#[test]
fn shipped_schemas_stream_or_are_refused_with_a_pointer() {
    let mut streamable = Vec::new();
    for name in chatparse::shipped::names() {
        let schema = Schema::from_path(repo_root().join(format!("schemas/{name}.json"))).unwrap();
        match XRegexPlan::check(&schema) {
            Ok(()) => streamable.push(name.to_owned()),
            Err(refusal) => {
                let text = refusal.to_string();
                println!("{name}\t{}\t{}", refusal.pointer, refusal.reason);
                assert!(
                    refusal.pointer.starts_with('/') || refusal.pointer.is_empty(),
                    "{name}: {text}"
                );
                assert!(!refusal.reason.is_empty(), "{name}: {text}");
                assert!(text.contains("cannot stream"), "{name}: {text}");
            }
        }
    }
    streamable.sort();
    assert_eq!(streamable, STREAMABLE);
}

#[test]
fn refusals_name_the_pointer_and_reason() {
    let schema = Schema::from_path(repo_root().join("schemas/qwen3.json")).unwrap();
    let refusal = XRegexPlan::check(&schema).unwrap_err();
    assert_eq!(refusal.pointer, "/x-regex-substitutions");
    assert!(refusal.reason.contains("substitutions"), "{refusal}");
    let schema = Schema::from_path(repo_root().join("schemas/hermes.json")).unwrap();
    let refusal = XRegexPlan::check(&schema).unwrap_err();
    assert_eq!(refusal.pointer, "/x-regex", "{refusal}");
    // A field whose pattern is not literal-delimited: its keyword, the pattern and why.
    let schema = Schema::from_json_str(
        r#"{"type": "object", "properties": {
            "thinking": {"type": "string", "x-regex": "<think>(.*?)(?:</think>|$)"},
            "content": {"type": "string", "x-regex": "</think>\\s*(.*)"}}}"#,
    )
    .unwrap();
    let refusal = XRegexPlan::check(&schema).unwrap_err();
    assert_eq!(refusal.pointer, "/properties/content/x-regex", "{refusal}");
    assert!(refusal.reason.contains("`</think>\\s*(.*)`"), "{refusal}");
    // Without `$` among the closers an unclosed region is no match at all.
    let schema = Schema::from_json_str(
        r#"{"type": "object", "properties": {
            "thinking": {"type": "string", "x-regex": "<think>(.*?)</think>"}}}"#,
    )
    .unwrap();
    let refusal = XRegexPlan::check(&schema).unwrap_err();
    assert!(
        refusal.reason.contains("no closer alternative is `$`"),
        "{refusal}"
    );
}

#[test]
fn streamed_message_equals_one_shot_on_the_conformance_corpus() {
    let mut rng = Rng(0x5eed_0006);
    let mut failures = Vec::new();
    let mut inputs = 0;
    let mut streamed_suites = Vec::new();
    for suite in load_suites() {
        let Ok(schema) = suite.load_schema() else {
            continue;
        };
        let Ok(plan) = XRegexPlan::new(suite.load_schema().unwrap()) else {
            continue;
        };
        streamed_suites.push(suite.name.clone());
        for case in &suite.cases {
            inputs += 1;
            let cuts = chunkings(&case.input, &mut rng, 200);
            failures.extend(check(&suite.name, &schema, &plan, &case.input, &cuts));
        }
    }
    for name in STREAMABLE {
        assert!(
            streamed_suites.iter().any(|s| s == name),
            "no conformance suite for {name}: {streamed_suites:?}"
        );
    }
    assert!(inputs > 20, "only {inputs} inputs");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Token soups of each streamable schema's own delimiters, whitespace, newlines and JSON bits:
/// the inputs where an incremental scan is most likely to go wrong.
#[test]
fn streamed_message_equals_one_shot_on_delimiter_soups() {
    let mut rng = Rng(0xdead_beef_0006);
    let mut failures = Vec::new();
    let mut kinds = std::collections::BTreeMap::<&str, usize>::new();
    for name in STREAMABLE {
        let path = repo_root().join(format!("schemas/{name}.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        let schema = Schema::from_path(&path).unwrap();
        let plan = XRegexPlan::new(&schema).unwrap();
        let mut atoms = delimiters(&text);
        // Pieces of delimiters too, so prefixes of them end chunks and inputs.
        let halves: Vec<String> = atoms
            .iter()
            .filter_map(|d| d.get(..d.len() / 2).map(str::to_owned))
            .collect();
        atoms.extend(halves);
        atoms.extend(
            [
                "\n",
                " ",
                "x",
                "é",
                "{\"a\": 1}",
                "[",
                "]",
                "{\"tool_name\": \"f\", \"parameters\": {}}",
                "to=functions.f",
                "to=functions.get_weather ",
                "<|message|>",
                "{}",
            ]
            .map(str::to_owned),
        );
        // Well-formed segments, so that many soups parse (tool calls included), not only fail.
        let segments: &[&str] = &[
            "<|channel|>analysis<|message|>Think.\n<|end|>",
            "<|start|>assistant<|channel|>final<|message|>Done. <|return|>",
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Oslo\"}<|call|>",
            "to=functions.f<|channel|>x<|message|>{}<|call|>",
            "<|START_THINKING|>Plan.<|END_THINKING|>",
            "<|START_RESPONSE|>Hi é<|END_RESPONSE|>",
            "<|START_ACTION|>[{\"tool_name\": \"f\", \"parameters\": {\"a\": 1}}]<|END_ACTION|>",
            "<|END_OF_TURN_TOKEN|>",
            "text ",
        ];
        for _ in 0..400 {
            let n = 1 + rng.below(8);
            let input: String = (0..n)
                .map(|_| {
                    if rng.below(3) == 0 {
                        atoms[rng.below(atoms.len())].as_str()
                    } else {
                        segments[rng.below(segments.len())]
                    }
                })
                .collect();
            let mut cuts = chunkings(&input, &mut rng, 20);
            cuts.truncate(60);
            if let Ok(v) = schema.parse(&input) {
                *kinds.entry(name).or_default() += usize::from(v.get("tool_calls").is_some());
            }
            failures.extend(check(name, &schema, &plan, &input, &cuts));
        }
    }
    // The soups reach tool calls that parse, not only errors and text fields.
    for name in STREAMABLE {
        assert!(
            kinds.get(name).copied().unwrap_or(0) >= 10,
            "{name}: {kinds:?}"
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn long_reasoning_streams_with_bounded_hold_back() {
    let path = repo_root().join("schemas/gpt_oss.json");
    let plan = XRegexPlan::new(Schema::from_path(&path).unwrap()).unwrap();
    let mut parser = XRegexStreamParser::new(&plan);
    parser.feed("<|channel|>analysis<|message|>").unwrap();
    // Ordinary text is passed on at once; a possible closer prefix is held back.
    let events = parser.feed("thinking hard").unwrap();
    assert_eq!(
        events,
        [Event::RegionChunk {
            field: "thinking",
            text: "thinking hard".into(),
            dirty: false
        }]
    );
    let events = parser.feed(" <|en").unwrap();
    assert_eq!(
        events,
        [Event::RegionChunk {
            field: "thinking",
            text: " ".into(),
            dirty: false
        }]
    );
    let events = parser.feed("d|>").unwrap();
    assert_eq!(
        events,
        [Event::RegionClose {
            field: "thinking",
            value: "thinking hard ".into()
        }]
    );
    let (message, _) = parser.finish().unwrap();
    assert_eq!(
        message,
        chatparse::json!({"role": "assistant", "thinking": "thinking hard "})
    );
}

#[test]
fn a_final_newline_is_held_back_for_dollar() {
    let path = repo_root().join("schemas/gpt_oss.json");
    let plan = XRegexPlan::new(Schema::from_path(&path).unwrap()).unwrap();
    let mut parser = XRegexStreamParser::new(&plan);
    let events = parser.feed("<|channel|>final<|message|>hi\n").unwrap();
    assert_eq!(events.len(), 2, "{events:?}"); // open, "hi"; the "\n" waits
    let (message, events) = parser.finish().unwrap();
    assert_eq!(message["content"], "hi");
    assert_eq!(
        events,
        [Event::RegionClose {
            field: "content",
            value: "hi".into()
        }]
    );
}

/// Issue 21 (first-hour stumbles): a `Schema` is `Clone` and a plan is made from `&Schema`, so
/// one load serves whole-output parses, a streaming plan and other threads.
#[test]
fn one_loaded_schema_parses_streams_and_clones() {
    let path = repo_root().join("schemas/gpt_oss.json");
    let schema = Schema::from_path(&path).unwrap();
    let plan = XRegexPlan::new(&schema).unwrap();
    let clone = schema.clone();
    let input = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Hi.<|return|>";
    let mut parser = XRegexStreamParser::new(&plan);
    parser.feed(input).unwrap();
    let (streamed, _) = parser.finish().unwrap();
    let whole = schema.parse(input).unwrap();
    assert_eq!(streamed, whole);
    let from_thread = std::thread::spawn(move || clone.parse(input).unwrap())
        .join()
        .unwrap();
    assert_eq!(from_thread, whole);
}

/// `\b` after an opener (`(?!\w)` there: Python's Unicode word characters, ASCII's under
/// `(?a)`) and a capture that runs through the closer (`(<a>.*?(?:</a>|$))`), for x-regex fields
/// and iterators: soups made to hit them, at every split point, stream the one-shot message and
/// regions whose text is each match's group 1.
#[test]
fn word_boundaries_and_captured_closers_stream() {
    let schemas = [
        r#"{"type": "object", "properties": {
            "calls": {"type": "array", "x-regex-iterator": "(<call\\b.*?(?:</call>|$))",
                      "items": {"type": "string"}},
            "answer": {"type": "string", "x-regex": "<ans\\b(?!x)(.*?(?:</ans>|$))"}}}"#,
        r#"{"type": "object", "properties": {
            "calls": {"type": "array", "x-regex-iterator": "(?a)(<call\\b.*?(?:</call>|$))",
                      "items": {"type": "string"}},
            "answer": {"type": "string", "x-regex": "(?a)(<ans\\b.*?)(?:</ans>|$)"}}}"#,
    ];
    let atoms = [
        "<call", "<call ", "<callé", "<call_", "<calls", "<call>", "</call>", "</ca", "<ans",
        "<ans>", "<ansx", "<ansé", "</ans>", "é", "_", "x", " ", "\n", ">", "text",
    ];
    let mut rng = Rng(0x0b0b_0006);
    let mut failures = Vec::new();
    for text in schemas {
        let schema = Schema::from_json_str(text).unwrap();
        let plan = XRegexPlan::new(&schema).unwrap();
        for _ in 0..300 {
            let n = 1 + rng.below(10);
            let input: String = (0..n).map(|_| atoms[rng.below(atoms.len())]).collect();
            let cuts = chunkings(&input, &mut rng, 20);
            failures.extend(check("word boundaries", &schema, &plan, &input, &cuts));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // A choice of openers streams only as a profile's tool calls.
    let schema = Schema::from_json_str(
        r#"{"type": "object", "properties": {"calls": {"type": "array",
            "x-regex-iterator": "((?:<a>|<b>).*?(?:</a>|$))", "items": {"type": "string"}}}}"#,
    )
    .unwrap();
    let refusal = XRegexPlan::check(&schema).unwrap_err();
    assert!(refusal.reason.contains("choice of openers"), "{refusal}");
}

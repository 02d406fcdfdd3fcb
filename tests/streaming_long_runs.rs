//! Long runs of white space where the shipped response templates hold text back (issue 21:
//! held text must not be read again per feed). Each run was once read whole by every feed —
//! qwen3's fast path after a cut `<|eot` (`StateFilter::verdict`), qwen3_5's call delimiter
//! searches around `<function=NAME>` and `</function>` — and those checks now resume where they
//! read to. These tests stream such inputs at many chunkings and require what the one-shot parse
//! gives: the message, every region's text, and which of it came before `finish` (a hold that
//! failed to move on would only show there). The one-shot message itself is checked against the
//! reference's recorded message for the case, with the run's expected effect. (The time taken
//! is measured by `examples/long_call.rs`, not asserted here.)

use std::collections::BTreeMap;

use chatparse::runtime::stream::{Event, ResponseTemplate, StreamParser};
use chatparse::{Map, Value};
use support::repo_root;

mod support;

/// A corpus case of a shipped template: the template, the case's input, prefix, tools and the
/// reference's one-shot message.
fn case(name: &str, case: &str) -> (ResponseTemplate, String, String, Vec<Value>, Value) {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join(format!("response_templates/{name}.json")))
        .expect("a shipped template");
    let template = ResponseTemplate::from_json_str(&text).expect("loads");
    let corpus =
        std::fs::read_to_string(root.join(format!("tests/streaming/expected/{name}.json")))
            .expect("its corpus");
    let doc: Value = chatparse::value::from_str(&corpus).expect("JSON");
    let found = doc["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .find(|c| c["name"] == case)
        .unwrap_or_else(|| panic!("{name} has no case {case}"));
    let tools = found["tools"].as_array().cloned().unwrap_or_default();
    let one_shot = &found["chunkings"][0];
    assert_eq!(one_shot["name"], "one_shot");
    (
        template,
        found["input"].as_str().expect("input").to_owned(),
        found["prefix"].as_str().expect("prefix").to_owned(),
        tools,
        one_shot["outcome"]["message"].clone(),
    )
}

/// What a stream gave: the message, and each region's text from the feeds and from `finish`.
type Streamed = (Value, BTreeMap<String, String>, BTreeMap<String, String>);

/// Appends a region's text to `texts`.
fn take(texts: &mut BTreeMap<String, String>, event: Event<'_>) {
    if let Event::RegionChunk { field, text, .. } = event {
        texts.entry(field.to_owned()).or_default().push_str(&text);
    }
}

/// `text` fed in `chunks`, then finished.
fn stream<'a>(
    template: &ResponseTemplate,
    prefix: &str,
    tools: &[Value],
    chunks: impl IntoIterator<Item = &'a str>,
) -> Streamed {
    let mut parser = StreamParser::with_tools(template, prefix, tools).expect("starts");
    let (mut fed, mut finished) = (BTreeMap::new(), BTreeMap::new());
    for chunk in chunks {
        parser
            .feed_with(chunk, |e| take(&mut fed, e))
            .expect("feeds");
    }
    let (message, events) = parser.finish().expect("finishes");
    events.into_iter().for_each(|e| take(&mut finished, e));
    (message, fed, finished)
}

/// Cuts `text` into pieces of `size` bytes, at char boundaries.
fn pieces(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// `input` with `run` put where `spot`'s `⎵` is (at its first occurrence).
fn with_run(input: &str, spot: &str, run: &str) -> String {
    let (before, after) = spot.split_once('⎵').expect("a spot has a ⎵");
    let at = input
        .find(&format!("{before}{after}"))
        .unwrap_or_else(|| panic!("{spot:?} not in the case"))
        + before.len();
    format!("{}{run}{}", &input[..at], &input[at..])
}

/// Every chunking checked: each split in two, and pieces of 1 to 17 bytes and of 4 KB. The
/// one-shot message is the reference's for the case, changed by `expect` (what the run does).
fn streams_as_one_shot(
    name: &str,
    case_name: &str,
    spot: &str,
    run: &str,
    expect: impl Fn(&mut Value, &str),
) {
    let (template, input, prefix, tools, mut message) = case(name, case_name);
    let text = with_run(&input, spot, run);
    let one_shot = stream(&template, &prefix, &tools, [text.as_str()]);
    expect(&mut message, run);
    assert_eq!(one_shot.0, message, "{name}/{case_name} at {spot:?}");
    let mut chunkings: Vec<Vec<&str>> = (1..=17).chain([4096]).map(|n| pieces(&text, n)).collect();
    for (k, _) in text.char_indices().skip(1) {
        chunkings.push(vec![&text[..k], &text[k..]]);
    }
    for chunks in chunkings {
        let got = stream(&template, &prefix, &tools, chunks.iter().copied());
        assert_eq!(
            got,
            one_shot,
            "{name}/{case_name} at {spot:?}, chunks of {:?} bytes",
            chunks.iter().map(|c| c.len()).collect::<Vec<_>>()
        );
    }
}

/// The run leaves the message as it was (white space a delimiter's `\s*` takes, or a value's
/// trim removes).
fn unchanged(_: &mut Value, _: &str) {}

#[test]
fn qwen3_white_space_after_a_cut_end_marker_streams_as_one_shot() {
    let spot = "Done.<|eot⎵_id|>";
    // The run is held from after `<|eot` (it may still be `\s*` of `<|im_end|>`); what
    // follows it ends no delimiter, so it is all content.
    let content = |m: &mut Value, run: &str| m["content"] = format!("Done.<|eot{run}_id|>").into();
    streams_as_one_shot("qwen3", "eot_id", spot, &"\n".repeat(600), content);
    streams_as_one_shot("qwen3", "eot_id", spot, &" \n\t".repeat(200), content);
    // Before the real end marker, the run is held and then taken with it.
    let spot = "Done.⎵<|eot_id|>";
    streams_as_one_shot("qwen3", "eot_id", spot, &"\n ".repeat(300), unchanged);
}

#[test]
fn qwen3_5_white_space_in_a_call_streams_as_one_shot() {
    let (case, run) = ("tool_call_no_tools", " ".repeat(400));
    streams_as_one_shot(
        "qwen3_5",
        case,
        "<function=get_wea⎵ther>",
        &run,
        |m, run| {
            m["tool_calls"][0]["function"]["name"] = format!("get_wea{run}ther").into();
        },
    );
    for spot in [
        "<tool_call>⎵\n<function=",
        "</function>⎵\n</tool_call>",
        "Paris⎵\n</parameter>",
    ] {
        streams_as_one_shot("qwen3_5", case, spot, &run, unchanged);
    }
    streams_as_one_shot(
        "qwen3_5",
        case,
        "</function>⎵\n</tool_call>",
        &"\n".repeat(400),
        unchanged,
    );
    streams_as_one_shot("qwen3_5", case, "<parameter=ci⎵ty>", &run, |m, run| {
        let args = &mut m["tool_calls"][0]["function"]["arguments"];
        let renamed: Map = args
            .as_object()
            .expect("arguments")
            .iter()
            .map(|(k, v)| match k.as_str() {
                "city" => (format!("ci{run}ty"), v.clone()),
                _ => (k.clone(), v.clone()),
            })
            .collect();
        *args = Value::Object(renamed);
    });
}

//! chatparse against SGLang's gateway parsers on every example output of the formats both handle
//! (`examples/NAME/*.txt` for each of `chatparse_peer::PAIRS`), one-shot and streamed in 1-byte
//! and 4-byte chunks.
//!
//! chatparse must agree with itself: its OpenAI deltas, for every chunking, rebuild its one-shot
//! message (asserted). Where the peer says something else — one-shot, streamed, or its streamed
//! result differing from its own one-shot — the difference is recorded; `differences.json` lists
//! every difference with a judgment against the model's real format (its chat template), and the
//! test fails on any difference not listed there (or listed but gone), so a change on either side
//! is seen. `CHATPARSE_PEER_WRITE=1` rewrites the file's list of cases, keeping the judgments.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chatparse_peer::{
    chatparse_parse, chatparse_stream, chunks, token_chunks, tools, tools_json, Parsed, Peer, PAIRS,
};
use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn show(p: &Option<Parsed>) -> Value {
    match p {
        None => json!("fails the message"),
        Some(p) => json!({
            "reasoning": p.reasoning, "content": p.content,
            "calls": p.calls.iter().map(|(n, a)| json!([n, a])).collect::<Vec<_>>(),
        }),
    }
}

/// What differs, in words: which side fails, or which parts differ and how.
fn category(ours: &Option<Parsed>, theirs: &Option<Parsed>) -> String {
    let (ours, theirs) = match (ours, theirs) {
        (None, _) => return "chatparse fails the message".into(),
        (_, None) => return "the peer fails the message".into(),
        (Some(a), Some(b)) => (a, b),
    };
    let mut parts = Vec::new();
    for (field, a, b) in [
        ("reasoning", &ours.reasoning, &theirs.reasoning),
        ("content", &ours.content, &theirs.content),
    ] {
        if a != b {
            parts.push(if a.trim() == b.trim() {
                format!("{field}: whitespace")
            } else {
                format!("{field}: text")
            });
        }
    }
    if ours.calls.len() != theirs.calls.len() {
        parts.push(format!(
            "calls: {} vs the peer's {}",
            ours.calls.len(),
            theirs.calls.len()
        ));
    } else if ours
        .calls
        .iter()
        .zip(&theirs.calls)
        .any(|(a, b)| a.0 != b.0)
    {
        parts.push("calls: names".into());
    } else {
        parts.push("calls: argument values".into());
    }
    if parts.last().is_some_and(|p| p == "calls: argument values")
        && ours.calls.iter().zip(&theirs.calls).all(|(a, b)| {
            Parsed {
                calls: vec![a.clone()],
                ..Parsed::default()
            }
            .same_as(&Parsed {
                calls: vec![b.clone()],
                ..Parsed::default()
            })
        })
    {
        parts.pop();
    }
    parts.join(", ")
}

/// The format's marker strings: every string of its stream profile, and its end tokens.
fn marker_strings(name: &str, eos: &[&str]) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) if s.len() > 1 && !s.chars().all(char::is_alphanumeric) => {
                out.push(s.clone())
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            Value::Object(o) => o.values().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out: Vec<String> = eos.iter().map(|s| s.to_string()).collect();
    let path = root().join(format!("schemas/streaming/{name}.json"));
    if let Ok(text) = std::fs::read_to_string(path) {
        walk(&serde_json::from_str(&text).expect("a profile"), &mut out);
    }
    out
}

fn same(a: &Option<Parsed>, b: &Option<Parsed>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.same_as(b),
        (None, None) => true,
        _ => false,
    }
}

#[test]
fn chatparse_and_the_peer_on_every_example() {
    let mut found: BTreeMap<String, Value> = BTreeMap::new();
    let mut checked = 0;
    for pair in PAIRS {
        let spec = chatparse::shipped::spec(pair.name)
            .expect("shipped")
            .expect("loads");
        let mut peer = Peer::new(pair);
        let dir = root().join("examples").join(pair.name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "txt"))
            .collect();
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let text = pair.server_text(&text);
            let case = format!(
                "{}/{}",
                pair.name,
                file.file_name().unwrap().to_string_lossy()
            );
            checked += 1;
            let ours = chatparse_parse(&spec, text);
            for size in [1, 4] {
                let streamed = chatparse_stream(&spec, chunks(text, size));
                assert!(
                    same(&ours, &streamed) && ours == streamed,
                    "{case}: chatparse streamed in {size}-byte chunks {} != one-shot {}",
                    show(&streamed),
                    show(&ours)
                );
            }
            let mut names: Vec<String> = ours
                .iter()
                .flat_map(|p| p.calls.iter().map(|c| c.0.clone()))
                .collect();
            let theirs = peer.parse(text);
            names.extend(
                theirs
                    .iter()
                    .flat_map(|p| p.calls.iter().map(|c| c.0.clone())),
            );
            let offered = tools(&tools_json(&names));
            let mut record = |mode: &str, peer_says: &Option<Parsed>| {
                if same(&ours, peer_says) {
                    return;
                }
                let mut what = category(&ours, peer_says);
                if mode != "one-shot" && !same(&theirs, peer_says) {
                    what.push_str("; the peer's stream differs from its one-shot");
                }
                found.insert(
                    format!("{case} {mode}"),
                    json!({"difference": what, "chatparse": show(&ours), "peer": show(peer_says)}),
                );
            };
            record("one-shot", &theirs);
            let markers = marker_strings(pair.name, pair.eos);
            let markers: Vec<&str> = markers.iter().map(String::as_str).collect();
            let streamed = peer.stream(token_chunks(text, &markers), &offered);
            record("tokens", &streamed);
            let streamed = peer.stream(chunks(text, 4), &offered);
            record("4-byte", &streamed);
        }
    }
    let path = root().join("peer/differences.json");
    let listed: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({"judgments": {}, "cases": {}}));
    if std::env::var_os("CHATPARSE_PEER_WRITE").is_some() {
        let mut cases = serde_json::Map::new();
        for (case, detail) in &found {
            let judged = listed["cases"][case]["judgment"].clone();
            let mut entry = detail.clone();
            entry["judgment"] = judged;
            cases.insert(case.clone(), entry);
        }
        let doc = json!({"judgments": listed["judgments"], "cases": cases});
        std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
    }
    let listed_cases = listed["cases"].as_object().cloned().unwrap_or_default();
    let new: Vec<&String> = found
        .keys()
        .filter(|c| !listed_cases.contains_key(*c))
        .collect();
    let gone: Vec<&String> = listed_cases
        .keys()
        .filter(|c| !found.contains_key(*c))
        .collect();
    // Listed with another difference, or without a judgment that `judgments` explains.
    let unjudged: Vec<&String> = listed_cases
        .iter()
        .filter(|(case, v)| {
            let judged = v["judgment"]
                .as_str()
                .is_some_and(|j| listed["judgments"][j].is_string());
            let same_difference = found
                .get(*case)
                .is_none_or(|f| f["difference"] == v["difference"]);
            !judged || !same_difference
        })
        .map(|(k, _)| k)
        .collect();
    eprintln!(
        "{checked} examples of {} formats; {} differences",
        PAIRS.len(),
        found.len()
    );
    assert!(
        new.is_empty() && gone.is_empty() && unjudged.is_empty(),
        "differences not in peer/differences.json: {new:#?}\nlisted but gone: {gone:#?}\nnot judged: {unjudged:#?}\n{}",
        new.iter()
            .map(|c| format!("{c}: {}", found[*c]))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

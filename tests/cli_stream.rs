//! `chatparse stream`, exercised by running the binary. Every expected event and message comes
//! from the streaming reference corpus (`tests/streaming/expected/`, produced by transformers
//! 5.23.0), never from the binary itself.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::Duration;

use chatparse::Value;
use support::{repo_root, same_value};

const SHIPPED: &[&str] = &["qwen3", "qwen3_5", "gemma4"];

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_chatparse"))
        .args(args)
        .current_dir(repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run chatparse")
}

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = spawn(args);
    {
        let mut pipe = child.stdin.take().unwrap();
        // The binary may exit (e.g. on a bad template) before reading its input.
        let _ = pipe.write_all(stdin);
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn corpus(template: &str) -> Value {
    let path = repo_root().join(format!("tests/streaming/expected/{template}.json"));
    chatparse::value::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn case(template: &str, name: &str) -> Value {
    corpus(template)["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("{template}/{name} is in the corpus"))
        .clone()
}

/// A scratch directory for prefix and tools files.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("cli-stream-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The flags for a corpus case: `--schema NAME --prefix FILE [--tools FILE]`.
fn case_args(template: &str, case: &Value, dir: &std::path::Path) -> Vec<String> {
    let prefix = dir.join("prefix.txt");
    std::fs::write(&prefix, case["prefix"].as_str().unwrap()).unwrap();
    let mut args = vec![
        "stream".to_owned(),
        "--schema".to_owned(),
        // transformers' own template of the family (the corpus came from it).
        format!("{template}.transformers"),
        "--prefix".to_owned(),
        prefix.display().to_string(),
    ];
    if let Some(tools) = case.get("tools") {
        let path = dir.join("tools.json");
        std::fs::write(&path, tools.to_string()).unwrap();
        args.extend(["--tools".to_owned(), path.display().to_string()]);
    }
    args
}

/// Events with consecutive chunks of one field merged: what no chunking may change (for the
/// cases the corpus marks `reference_invariant`).
fn merged(events: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for e in events {
        if e["type"] == "region_chunk" {
            if let Some(last) = out.last_mut() {
                if last["type"] == "region_chunk" && last["field"] == e["field"] {
                    let joined = format!(
                        "{}{}",
                        last["text"].as_str().unwrap(),
                        e["text"].as_str().unwrap()
                    );
                    last["text"] = Value::String(joined);
                    continue;
                }
            }
        }
        out.push(e.clone());
    }
    out
}

fn all_same(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_value(x, y))
}

/// The reference's events for the one-shot chunking (constructor, feed, finalize) and message.
fn one_shot(case: &Value) -> (Vec<Value>, Value) {
    let chunking = case["chunkings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "one_shot")
        .unwrap();
    let mut events: Vec<Value> = case["init"]["events"].as_array().unwrap().clone();
    for feed in chunking["feeds"].as_array().unwrap() {
        events.extend(feed.as_array().unwrap().iter().cloned());
    }
    let outcome = &chunking["outcome"];
    events.extend(
        outcome["finalize_events"]
            .as_array()
            .unwrap()
            .iter()
            .cloned(),
    );
    (events, outcome["message"].clone())
}

fn lines(out: &Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| chatparse::value::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

#[test]
fn stream_prints_the_reference_events_then_the_message() {
    for &(template, name) in &[
        ("qwen3", "tool_call"),
        ("qwen3", "unicode"),
        ("qwen3", "prefilled_think"),
        ("qwen3", "long_reasoning_call"),
        ("qwen3_5", "tool_call"),
        ("qwen3_5", "unicode"),
        ("qwen3_5", "two_tool_calls"),
        ("gemma4", "tool_call"),
        ("gemma4", "unicode"),
        ("gemma4", "thought"),
    ] {
        let case = case(template, name);
        assert_eq!(case["reference_invariant"], true, "{template}/{name}");
        let dir = scratch(&format!("{template}-{name}"));
        let args = case_args(template, &case, &dir);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&args, case["input"].as_str().unwrap().as_bytes());
        assert!(out.status.success(), "{}", text(&out.stderr));
        let mut got = lines(&out);
        let message = got.pop().expect("the message line");
        let (want_events, want_message) = one_shot(&case);
        assert!(
            same_value(&message, &want_message),
            "{template}/{name}: {message}"
        );
        // How standard input arrives decides the chunk boundaries; the merged form not.
        assert!(
            all_same(&merged(&got), &merged(&want_events)),
            "{template}/{name}:\n  got  {got:?}\n  want {want_events:?}"
        );
    }
}

/// Reads `n` lines of events from the binary's output.
fn read_events(out: &mut BufReader<ChildStdout>, n: usize) -> Vec<Value> {
    (0..n)
        .map(|_| {
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            chatparse::value::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
        })
        .collect()
}

#[test]
fn stream_emits_each_pieces_events_as_it_arrives() {
    // A recorded chunking where every feed produces events: send a chunk, wait for exactly the
    // reference's events of that feed, then send the next. The binary must not wait for more
    // input (or the end of it) before printing what a chunk completed.
    let mut found = None;
    'search: for template in SHIPPED {
        for case in corpus(template)["cases"].as_array().unwrap() {
            for chunking in case["chunkings"].as_array().unwrap() {
                let feeds = chunking["feeds"].as_array().unwrap();
                if feeds.len() >= 5 && feeds.iter().all(|f| !f.as_array().unwrap().is_empty()) {
                    found = Some((*template, case.clone(), chunking.clone()));
                    break 'search;
                }
            }
        }
    }
    let (template, case, chunking) = found.expect("a chunking with events on every feed");
    let dir = scratch("interactive");
    let args = case_args(template, &case, &dir);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = spawn(&args);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let init = case["init"]["events"].as_array().unwrap();
    assert!(all_same(&read_events(&mut stdout, init.len()), init));
    let chunks = chunking["chunks"].as_array().unwrap();
    let feeds = chunking["feeds"].as_array().unwrap();
    for (chunk, want) in chunks.iter().zip(feeds) {
        stdin.write_all(chunk.as_str().unwrap().as_bytes()).unwrap();
        stdin.flush().unwrap();
        let want = want.as_array().unwrap();
        let got = read_events(&mut stdout, want.len());
        assert!(
            all_same(&got, want),
            "{template}/{} after {chunk}:\n  got  {got:?}\n  want {want:?}",
            case["name"]
        );
    }
    drop(stdin);
    let outcome = &chunking["outcome"];
    let finals = outcome["finalize_events"].as_array().unwrap();
    assert!(all_same(&read_events(&mut stdout, finals.len()), finals));
    let message = read_events(&mut stdout, 1).remove(0);
    assert!(same_value(&message, &outcome["message"]), "{message}");
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_character_split_across_reads_is_fed_whole() {
    let case = case("qwen3", "unicode");
    let input = case["input"].as_str().unwrap().as_bytes();
    let split = (1..input.len())
        .find(|&i| !case["input"].as_str().unwrap().is_char_boundary(i))
        .expect("a multi-byte character");
    let dir = scratch("utf8");
    let args = case_args("qwen3", &case, &dir);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut child = spawn(&args);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&input[..split]).unwrap();
    stdin.flush().unwrap();
    // Give the binary time to read the first piece on its own.
    std::thread::sleep(Duration::from_millis(100));
    stdin.write_all(&input[split..]).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut got = lines(&out);
    let message = got.pop().unwrap();
    let (want_events, want_message) = one_shot(&case);
    assert!(same_value(&message, &want_message), "{message}");
    assert!(all_same(&merged(&got), &merged(&want_events)), "{got:?}");
}

#[test]
fn invalid_utf8_is_a_parse_error() {
    let out = run(&["stream", "--schema", "qwen3"], b"abc\xff");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("error: "));
    let out = run(
        &["stream", "--schema", "qwen3"],
        "é".as_bytes().get(..1).unwrap(),
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_region_the_reference_cannot_parse_exits_1() {
    // The reference raises on this input (`outcome.error_at`).
    let case = case("qwen3", "bad_call");
    let chunking = &case["chunkings"][0];
    assert!(chunking["outcome"].get("error_at").is_some());
    let dir = scratch("bad-call");
    let args = case_args("qwen3", &case, &dir);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args, case["input"].as_str().unwrap().as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("/fields/tool_calls"), "{err}");
}

#[test]
fn x_regex_schemas_that_cannot_stream_say_where_and_why() {
    // The shipped files without their stream profiles (a path loads the schema alone).
    for (spec, pointer) in [
        ("schemas/qwen3_coder.json", "/x-regex"),
        ("schemas/qwen3.json", "/x-regex-substitutions"),
        ("schemas/hermes.json", "/x-regex"),
    ] {
        let out = run(&["stream", "--schema", spec], b"hi");
        assert_eq!(out.status.code(), Some(2), "{spec}");
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!(
                "schema {spec} is an x-regex response schema that cannot stream: {pointer}: "
            )),
            "{err}"
        );
        assert!(err.contains("with a stream profile"), "{err}");
    }
    // The shipped names stream (with their profiles).
    for name in ["qwen3_coder", "qwen3", "hermes"] {
        let out = run(&["stream", "--schema", name], b"hi");
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
    }
}

#[test]
fn x_regex_schemas_with_literal_delimited_fields_stream() {
    // The expected message is the one-shot parse of the same input (`chatparse parse`).
    let input = "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant\
                 <|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>\
                 {\"city\": \"Paris\"}<|call|>";
    let parsed = run(&["parse", "--schema", "gpt_oss"], input.as_bytes());
    assert_eq!(parsed.status.code(), Some(0), "{}", text(&parsed.stderr));
    let want: Value = chatparse::value::from_str(text(&parsed.stdout).trim()).unwrap();
    for spec in ["gpt_oss", "schemas/gpt_oss.json"] {
        let out = run(&["stream", "--schema", spec], input.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let lines: Vec<Value> = text(&out.stdout)
            .lines()
            .map(|l| chatparse::value::from_str(l).unwrap())
            .collect();
        let (message, events) = lines.split_last().unwrap();
        assert!(same_value(message, &want), "{message} vs {want}");
        let thinking: String = events
            .iter()
            .filter(|e| e["type"] == "region_chunk" && e["field"] == "thinking")
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert_eq!(thinking, "Need the weather.");
        assert!(events.iter().any(|e| e["type"] == "region_close"
            && e["field"] == "tool_calls"
            && e["value"]["function"]["name"] == "get_weather"));
    }
    // No prompt prefix for x-regex schemas.
    let dir = scratch("xregex-prefix");
    let prefix = dir.join("prefix.txt");
    std::fs::write(&prefix, "x").unwrap();
    let out = run(
        &[
            "stream",
            "--schema",
            "gpt_oss",
            "--prefix",
            &prefix.display().to_string(),
        ],
        b"hi",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--prefix and --tools apply to response templates"));
}

#[test]
fn an_invalid_template_lists_every_problem_with_exit_2() {
    // Templates the reference refuses, with the pointer of the offending node.
    let doc: Value = chatparse::value::from_str(
        &std::fs::read_to_string(
            repo_root().join("tests/streaming/expected/invalid_templates.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let dir = scratch("invalid");
    let mut checked = 0;
    for t in doc["templates"].as_array().unwrap() {
        let pointer = t["pointer"].as_str().unwrap();
        if pointer.is_empty() {
            continue; // not an object: no pointer to look for
        }
        let path = dir.join(format!("{}.json", t["name"].as_str().unwrap()));
        std::fs::write(&path, t["template"].to_string()).unwrap();
        let out = run(&["stream", "--template", path.to_str().unwrap()], b"hi");
        assert_eq!(out.status.code(), Some(2), "{}", t["name"]);
        assert!(out.stdout.is_empty());
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("{}: {pointer}: ", path.display())),
            "{}: want {pointer}, got {err}",
            t["name"]
        );
        checked += 1;
    }
    assert!(checked >= 20, "{checked}");
    let out = run(&["stream", "--schema", "no_such_template"], b"hi");
    assert_eq!(out.status.code(), Some(2));
}

//! `chatparse parse --openai` and `chatparse stream --openai` (SPEC §5.1), run as a binary. The
//! expected contents come from the reference corpora (`tests/conformance/expected/`,
//! `tests/streaming/expected/`) and the input files themselves.

mod support;

use std::process::Output;

use chatparse::Value;
use support::{repo_root, run_chatparse};

fn run(args: &[&str], stdin: &[u8]) -> Output {
    run_chatparse(args, Some(stdin))
}

fn lines(out: &Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| chatparse::value::from_str(l).unwrap())
        .collect()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo_root().join(path)).unwrap()
}

/// The reference value of a conformance case.
fn reference(suite: &str, case: &str) -> Value {
    let doc: Value =
        chatparse::value::from_str(&read(&format!("tests/conformance/expected/{suite}.json")))
            .unwrap();
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == case)
        .unwrap()["value"]
        .clone()
}

/// The message the chunk objects rebuild.
fn rebuild(chunks: &[Value]) -> Value {
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut calls: Vec<Value> = Vec::new();
    for c in chunks {
        let d = &c["delta"];
        content.push_str(d["content"].as_str().unwrap_or(""));
        reasoning.push_str(d["reasoning_content"].as_str().unwrap_or(""));
        for call in d["tool_calls"].as_array().into_iter().flatten() {
            let i = call["index"].as_u64().unwrap() as usize;
            if i == calls.len() {
                calls.push(chatparse::json!({"id": call["id"], "type": call["type"],
                    "function": {"name": call["function"]["name"], "arguments": ""}}));
            }
            let args = calls[i]["function"]["arguments"]
                .as_str()
                .unwrap()
                .to_owned()
                + call["function"]["arguments"].as_str().unwrap_or("");
            calls[i]["function"]["arguments"] = Value::String(args);
        }
    }
    let mut m = chatparse::json!({"role": "assistant",
        "content": if content.is_empty() { Value::Null } else { Value::String(content) }});
    if !reasoning.is_empty() {
        m["reasoning_content"] = Value::String(reasoning);
    }
    if !calls.is_empty() {
        m["tool_calls"] = Value::Array(calls);
    }
    m
}

/// Whether the reference events of the output (not the prompt) open a text field twice.
fn rewritten(case: &Value) -> bool {
    let outcome = &case["chunkings"][0];
    let mut opens: Vec<&str> = outcome["feeds"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f.as_array().unwrap())
        .chain(
            outcome["outcome"]["finalize_events"]
                .as_array()
                .into_iter()
                .flatten(),
        )
        .filter(|e| e["type"] == "region_open")
        .filter_map(|e| e["field"].as_str())
        .filter(|f| *f != "tool_calls")
        .collect();
    let n = opens.len();
    opens.sort_unstable();
    opens.dedup();
    n != opens.len()
}

#[test]
fn parse_openai_prints_one_message_with_kimis_own_ids() {
    let file = "examples/kimi_k2/tool_calls.txt";
    let out = lines(&run(
        &["parse", "--schema", "kimi_k2", "--openai", file],
        b"",
    ));
    assert_eq!(out.len(), 1);
    let m = &out[0];
    let r = reference("kimi_k2", "tool_calls");
    assert_eq!(m["role"], "assistant");
    assert_eq!(m["content"], r["content"]);
    assert_eq!(m["reasoning_content"], r["reasoning_content"]);
    let raw = read(file);
    let calls = m["tool_calls"].as_array().unwrap();
    let expected = r["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), expected.len());
    for (call, want) in calls.iter().zip(expected) {
        assert_eq!(call["id"], want["id"]);
        assert_eq!(call["type"], "function");
        assert_eq!(call["function"]["name"], want["function"]["name"]);
        let args = call["function"]["arguments"].as_str().unwrap();
        assert!(raw.contains(args), "the model's own text: {args}");
        let decoded: Value = chatparse::value::from_str(args).unwrap();
        assert_eq!(decoded, want["function"]["arguments"]);
    }
}

#[test]
fn parse_openai_ids_reasoning_key_and_normalized_arguments() {
    let file = "examples/hermes/tool_calls.txt";
    let r = reference("hermes", "tool_calls");
    let n = r["tool_calls"].as_array().unwrap().len();

    let counted = lines(&run(
        &[
            "parse",
            "--schema",
            "hermes",
            "--openai",
            "--call-ids",
            "counter",
            file,
        ],
        b"",
    ));
    let ids: Vec<&str> = counted[0]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let want: Vec<String> = (0..n).map(|i| format!("call_{i}")).collect();
    assert_eq!(ids, want);

    let random = lines(&run(
        &["parse", "--schema", "hermes", "--openai", file],
        b"",
    ));
    for call in random[0]["tool_calls"].as_array().unwrap() {
        let id = call["id"].as_str().unwrap();
        assert!(id.len() == 29 && id.starts_with("call_"), "{id}");
        assert!(id[5..].bytes().all(|b| b.is_ascii_alphanumeric()), "{id}");
    }

    let normalized = lines(&run(
        &[
            "parse",
            "--schema",
            "hermes",
            "--openai",
            "--normalize-arguments",
            file,
        ],
        b"",
    ));
    for (call, want) in normalized[0]["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .zip(r["tool_calls"].as_array().unwrap())
    {
        assert_eq!(
            call["function"]["arguments"],
            want["function"]["arguments"].to_string()
        );
    }

    let both = lines(&run(
        &[
            "parse",
            "--schema",
            "gpt_oss",
            "--openai",
            "--reasoning-key",
            "both",
            "examples/gpt_oss/reasoning_and_answer.txt",
        ],
        b"",
    ));
    let r = reference("gpt_oss", "reasoning_and_answer");
    assert_eq!(both[0]["reasoning_content"], r["thinking"]);
    assert_eq!(both[0]["reasoning"], r["thinking"]);
    assert_eq!(both[0]["content"], r["content"]);
}

/// `stream --openai` prints chunk objects whose deltas rebuild the `parse --openai` message, for
/// a template with a prompt prefix and tools, and for an x-regex schema that streams.
#[test]
fn stream_openai_deltas_rebuild_the_parse_message() {
    let corpus: Value =
        chatparse::value::from_str(&read("tests/streaming/expected/qwen3.json")).unwrap();
    let dir = std::env::temp_dir().join(format!("chatparse-cli-openai-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for case in corpus["cases"].as_array().unwrap() {
        let Some(want) = case["chunkings"][0]["outcome"].get("message") else {
            continue;
        };
        let prefix = dir.join("prefix.txt");
        std::fs::write(&prefix, case["prefix"].as_str().unwrap()).unwrap();
        let tools = dir.join("tools.json");
        std::fs::write(
            &tools,
            case.get("tools")
                .unwrap_or(&Value::Array(vec![]))
                .to_string(),
        )
        .unwrap();
        let (prefix, tools) = (prefix.to_str().unwrap(), tools.to_str().unwrap());
        let input = case["input"].as_str().unwrap().as_bytes();
        let common = [
            "--schema",
            "qwen3.transformers",
            "--openai",
            "--call-ids",
            "counter",
            "--prefix",
            prefix,
            "--tools",
            tools,
        ];
        let streamed = run(&[&["stream"][..], &common].concat(), input);
        let message = lines(&run(&[&["parse"][..], &common].concat(), input));
        if rewritten(case) && !streamed.status.success() {
            // Text after the end of the turn replaces a field the deltas already sent (the
            // reference keeps the last region): the stream fails rather than contradict them.
            let stderr = String::from_utf8_lossy(&streamed.stderr);
            assert!(stderr.contains("streamed text changed"), "{stderr}");
            assert_eq!(streamed.status.code(), Some(1), "{}", case["name"]);
            continue;
        }
        let chunks = lines(&streamed);
        assert_eq!(rebuild(&chunks), message[0], "{}", case["name"]);
        assert_eq!(chunks[0]["delta"], chatparse::json!({"role": "assistant"}));
        let reason = if want.get("tool_calls").is_some() {
            "tool_calls"
        } else {
            "stop"
        };
        assert_eq!(chunks.last().unwrap()["finish_reason"], reason);
        assert_eq!(
            message[0]["content"],
            want.get("content").cloned().unwrap_or(Value::Null)
        );
        assert_eq!(
            message[0].get("reasoning_content"),
            want.get("reasoning_content"),
            "{}",
            case["name"]
        );
        checked += 1;
    }
    assert!(checked > 40, "{checked}");
    std::fs::remove_dir_all(&dir).ok();

    let input = read("examples/gpt_oss/tool_calls.txt");
    let args = ["--schema", "gpt_oss", "--openai", "--call-ids", "counter"];
    let chunks = lines(&run(&[&["stream"][..], &args].concat(), input.as_bytes()));
    let message = lines(&run(&[&["parse"][..], &args].concat(), input.as_bytes()));
    assert_eq!(rebuild(&chunks), message[0]);
    assert_eq!(chunks.last().unwrap()["finish_reason"], "tool_calls");
    let r = reference("gpt_oss", "tool_calls");
    assert_eq!(
        message[0]["tool_calls"].as_array().unwrap().len(),
        r["tool_calls"].as_array().unwrap().len()
    );
}

#[test]
fn stream_openai_refuses_a_schema_that_cannot_stream() {
    // A root regex that cuts the whole output, and no stream profile.
    let dir = std::env::temp_dir().join(format!("chatparse-openai-refuse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let schema = dir.join("whole.json");
    std::fs::write(
        &schema,
        r#"{"type": "object", "x-regex": "^(?P<content>.*)$", "properties": {"content": {"type": "string"}}}"#,
    )
    .unwrap();
    let out = run(
        &["stream", "--schema", schema.to_str().unwrap(), "--openai"],
        b"hi",
    );
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot stream"));
    // --openai options without --openai, and --jsonl with --openai, are usage errors.
    let out = run(
        &["parse", "--schema", "hermes", "--normalize-arguments"],
        b"hi",
    );
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["parse", "--schema", "hermes", "--openai", "--jsonl"], b"");
    assert_eq!(out.status.code(), Some(2));
    // A parse error is exit 1.
    let out = run(
        &[
            "parse",
            "--schema",
            "hermes",
            "--openai",
            "examples/hermes/truncated.txt",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
}

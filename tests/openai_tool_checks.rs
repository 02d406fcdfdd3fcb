//! What the request allows of tool calls (`openai::ToolChecks`, `--only-offered-tools`,
//! `--no-parallel-tool-calls`): a call to a tool not offered, or a second call when parallel
//! calls are off, fails the stream (strict) or is set aside and reported (lenient); the calls
//! before it are sent either way, and the deltas rebuild the message.

mod support;

use chatparse::runtime::openai::{parse_with_checks, CounterIds, Delta, Options, ToolChecks};
use chatparse::{json, Value};

const TWO_CALLS: &str = "Sure.<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call><|im_end|>";

fn offered(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({"type": "function", "function": {"name": n}}))
        .collect()
}

fn run(checks: ToolChecks, chunk: usize) -> (Vec<String>, Result<Value, String>) {
    let spec = chatparse::shipped::spec("hermes").unwrap().unwrap();
    let mut stream = support::counter_deltas(&spec).with_tool_checks(checks);
    let mut names = Vec::new();
    let mut record = |d: Delta<'_>| {
        if let Delta::CallStart { name, .. } = d {
            names.push(name.to_owned());
        }
    };
    let bytes: Vec<usize> = (1..=TWO_CALLS.len())
        .filter(|&i| TWO_CALLS.is_char_boundary(i))
        .collect();
    let mut at = 0;
    for cut in bytes.into_iter().step_by(chunk) {
        if let Err(e) = stream.feed_with(&TWO_CALLS[at..cut], &mut record) {
            return (names, Err(e.to_string()));
        }
        at = cut;
    }
    if at < TWO_CALLS.len() {
        if let Err(e) = stream.feed_with(&TWO_CALLS[at..], &mut record) {
            return (names, Err(e.to_string()));
        }
    }
    let message = stream.finish_with(&mut record).map_err(|e| e.to_string());
    (names, message)
}

#[test]
fn a_tool_not_offered_fails_strictly_after_the_calls_before_it() {
    for chunk in [1, 7, 1000] {
        let (sent, message) = run(ToolChecks::offered(&offered(&["a"])), chunk);
        assert_eq!(sent, ["a"], "chunk {chunk}");
        let err = message.unwrap_err();
        assert!(
            err.contains("`b` is not one of the tools offered (a)"),
            "{err}"
        );
    }
}

#[test]
fn a_second_call_fails_when_parallel_calls_are_off() {
    let checks = ToolChecks {
        single_call: true,
        ..ToolChecks::default()
    };
    let (sent, message) = run(checks, 3);
    assert_eq!(sent, ["a"]);
    assert!(message.unwrap_err().contains("a second call (`b`)"));
}

#[test]
fn lenient_checks_set_the_call_aside() {
    let checks = ToolChecks {
        lenient: true,
        ..ToolChecks::offered(&offered(&["a"]))
    };
    for chunk in [1, 5, 1000] {
        let (sent, message) = run(checks.clone(), chunk);
        assert_eq!(sent, ["a"]);
        let message = message.unwrap();
        assert_eq!(message["content"], "Sure.");
        let calls = message["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0]["function"]["name"], "a");
        assert_eq!(calls[0]["function"]["arguments"], "{\"x\": 1}");
    }
    let spec = chatparse::shipped::spec("hermes").unwrap().unwrap();
    let (message, rejected) = parse_with_checks(
        &spec,
        TWO_CALLS,
        None,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
        checks,
    )
    .unwrap();
    assert_eq!(message["tool_calls"].as_array().unwrap().len(), 1);
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].name, "b");
    assert_eq!(rejected[0].arguments, "{}");
    // Allowed calls pass untouched.
    let (sent, message) = run(ToolChecks::offered(&offered(&["a", "b"])), 2);
    assert_eq!(sent, ["a", "b"]);
    assert_eq!(message.unwrap()["tool_calls"].as_array().unwrap().len(), 2);
}

#[test]
fn cli_flags() {
    let dir = std::env::temp_dir().join(format!("chatparse-tool-checks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tools = dir.join("tools.json");
    std::fs::write(&tools, json!(offered(&["a"])).to_string()).unwrap();
    let tools = tools.to_str().unwrap();
    let input = TWO_CALLS.as_bytes();
    let out = support::run_chatparse(
        &[
            "parse",
            "--schema",
            "hermes",
            "--openai",
            "--tools",
            tools,
            "--only-offered-tools",
        ],
        Some(input),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`b` is not one of the tools offered"));
    let out = support::run_chatparse(
        &[
            "stream",
            "--schema",
            "hermes",
            "--openai",
            "--call-ids",
            "counter",
            "--no-parallel-tool-calls",
        ],
        Some(input),
    );
    assert_eq!(out.status.code(), Some(1));
    // The deltas before the refused call were written.
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("\"name\":\"a\""), "{stdout}");
    assert!(!stdout.contains("\"name\":\"b\""), "{stdout}");
    // Without the flags, both calls pass.
    let out = support::run_chatparse(
        &["parse", "--schema", "hermes", "--openai", "--tools", tools],
        Some(input),
    );
    assert_eq!(out.status.code(), Some(0));
    // --only-offered-tools needs --tools.
    let out = support::run_chatparse(
        &[
            "parse",
            "--schema",
            "hermes",
            "--openai",
            "--only-offered-tools",
        ],
        Some(input),
    );
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

//! The CLI contract (SPEC §5), exercised by running the binary. Expected messages come from the
//! reference corpus (`tests/conformance/expected/`), not from the binary itself.

mod support;

use std::process::Output;

use chatparse::Value;
use support::{load_suites, repo_root, run_chatparse, same_value, Expect};

fn chatparse(args: &[&str], stdin: Option<&[u8]>) -> Output {
    run_chatparse(args, stdin)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// The reference's value for a case of a shipped schema's golden suite.
fn reference_value(suite: &str, case: &str) -> Value {
    let suites = load_suites();
    let s = suites.iter().find(|s| s.name == suite).expect("suite");
    let c = s.cases.iter().find(|c| c.name == case).expect("case");
    match &c.expect {
        Expect::Value(v) => v.clone(),
        _ => panic!("{suite}/{case} is not a value case"),
    }
}

#[test]
fn parse_a_shipped_example_prints_the_reference_message_as_one_line() {
    let out = chatparse(
        &[
            "parse",
            "--schema",
            "gpt_oss",
            "examples/gpt_oss/tool_call.txt",
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    let got: Value = chatparse::value::from_str(&text).unwrap();
    assert!(
        same_value(&got, &reference_value("gpt_oss", "tool_call")),
        "{text}"
    );
}

#[test]
fn parse_reads_standard_input_and_pretty_prints() {
    let input = std::fs::read(repo_root().join("examples/gpt_oss/tool_call.txt")).unwrap();
    let out = chatparse(&["parse", "--schema", "gpt_oss", "--pretty"], Some(&input));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.lines().count() > 1,
        "pretty output spans lines: {text}"
    );
    let got: Value = chatparse::value::from_str(&text).unwrap();
    assert!(same_value(&got, &reference_value("gpt_oss", "tool_call")));
}

#[test]
fn parse_with_a_schema_path_uses_the_interpreter() {
    let out = chatparse(
        &[
            "parse",
            "--schema",
            "schemas/gpt_oss.json",
            "examples/gpt_oss/tool_call.txt",
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let got: Value = chatparse::value::from_str(&stdout(&out)).unwrap();
    assert!(same_value(&got, &reference_value("gpt_oss", "tool_call")));
}

#[test]
fn parse_error_goes_to_stderr_with_exit_1() {
    // Python: int("abc") raises ValueError, so the reference raises here.
    let schema =
        r#"{"type": "object", "properties": {"n": {"type": "integer", "x-regex": "n=(\\w+)"}}}"#;
    let dir = std::env::temp_dir().join(format!("chatparse-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("int.json");
    std::fs::write(&path, schema).unwrap();
    let out = chatparse(
        &["parse", "--schema", path.to_str().unwrap()],
        Some(b"n=abc"),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(err.starts_with("error: "), "{err}");
    assert!(err.contains("/properties/n"), "{err}");
}

#[test]
fn jsonl_gives_one_line_per_input_line_and_exits_0() {
    let tool_call =
        std::fs::read_to_string(repo_root().join("examples/gpt_oss/tool_call.txt")).unwrap();
    let mut input = serde_json::to_string(&tool_call).unwrap();
    input.push('\n');
    input.push_str("this line is not a JSON string\n");
    // A blank line is no input: no output line (issue 21), and the error above says its line.
    input.push_str("\n   \n");
    input.push_str("\"\\ud800 alone\"\n");
    input.push_str("\"<|channel|>final<|message|>hi\"\n");
    let out = chatparse(
        &["parse", "--schema", "gpt_oss", "--jsonl"],
        Some(input.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| chatparse::value::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(same_value(
        &lines[0],
        &reference_value("gpt_oss", "tool_call")
    ));
    let error = lines[1]["error"].as_str().unwrap();
    assert!(error.contains("not a JSON string"), "{error}");
    assert!(error.starts_with("line 2: "), "{error}");
    // A lone surrogate escape is named as such (issue 21), on its own line number.
    let error = lines[2]["error"].as_str().unwrap();
    assert!(
        error.starts_with("line 5: ") && error.contains("lone surrogate"),
        "{error}"
    );
    assert_eq!(lines[3]["content"], "hi");
}

#[test]
fn invalid_schema_lists_every_problem_with_exit_2() {
    let dir = std::env::temp_dir().join(format!("chatparse-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    std::fs::write(
        &path,
        r#"{"type": "object", "properties": {"a": {"type": "strin"}, "b": {"type": "array", "x-regex-iterator": "(x"}}}"#,
    )
    .unwrap();
    for args in [
        vec!["parse", "--schema", path.to_str().unwrap()],
        vec!["check", path.to_str().unwrap()],
    ] {
        let out = chatparse(&args, Some(b"x"));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains("bad.json"), "{err}");
        assert!(err.contains("/properties/a/type"), "{err}");
        assert!(err.contains("/properties/b/x-regex-iterator"), "{err}");
        assert!(err.contains("/properties/b: array node without"), "{err}");
    }
}

#[test]
fn check_accepts_every_shipped_schema() {
    let mut args = vec!["check".to_owned()];
    for entry in std::fs::read_dir(repo_root().join("schemas")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            args.push(path.display().to_string());
        }
    }
    assert!(args.len() > 7, "shipped schemas present");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = chatparse(&args, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn schemas_lists_the_shipped_names() {
    let out = chatparse(&["schemas"], None);
    assert!(out.status.success());
    let names: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    let mut on_disk: Vec<String> = std::fs::read_dir(repo_root().join("schemas"))
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "json")
                .then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    on_disk.sort();
    assert_eq!(names, on_disk);
    for required in [
        "gpt_oss",
        "smollm3",
        "qwen3",
        "qwen3_coder",
        "hermes",
        "cohere_command_r7b",
        "ernie4_5",
    ] {
        assert!(names.iter().any(|n| n == required), "{required} missing");
    }
}

#[test]
fn both_engines_print_the_reference_message() {
    for engine in ["generated", "interpreted"] {
        let out = chatparse(
            &[
                "parse",
                "--schema",
                "gpt_oss",
                "--engine",
                engine,
                "examples/gpt_oss/tool_call.txt",
            ],
            None,
        );
        assert!(out.status.success(), "{engine}: {}", stderr(&out));
        let got: Value = chatparse::value::from_str(&stdout(&out)).unwrap();
        assert!(
            same_value(&got, &reference_value("gpt_oss", "tool_call")),
            "{engine}"
        );
    }
}

#[test]
fn generated_engine_with_a_schema_path_exits_2() {
    let out = chatparse(
        &[
            "parse",
            "--schema",
            "schemas/gpt_oss.json",
            "--engine",
            "generated",
        ],
        Some(b"x"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("response_parser!"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unknown_schema_name_exits_2() {
    let out = chatparse(&["parse", "--schema", "no_such_model"], Some(b"x"));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("gpt_oss"), "lists the shipped names");
}

#[test]
fn non_utf8_input_is_an_error_not_a_panic() {
    let out = chatparse(&["parse", "--schema", "gpt_oss"], Some(&[0xff, 0xfe, b'a']));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("UTF-8"));
}

#[test]
fn pretty_and_jsonl_conflict() {
    let out = chatparse(
        &["parse", "--schema", "gpt_oss", "--jsonl", "--pretty"],
        Some(b""),
    );
    assert_eq!(out.status.code(), Some(2));
}

/// `-` names standard input, as in every Unix tool (issue 21: it was read as a file name).
#[test]
fn dash_is_standard_input() {
    let o = chatparse(
        &["parse", "--schema", "qwen3", "-"],
        Some(b"<think>\nHm.\n</think>\n\nHi!"),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let message: Value = chatparse::value::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(message["content"], "Hi!");
}

/// A `--tools` file that is not a JSON array is a bad argument: exit 2 (SPEC §5), not the parse
/// error's 1.
#[test]
fn bad_tools_file_exits_2() {
    let dir = std::env::temp_dir().join(format!("chatparse-cli-tools-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tools = dir.join("tools.json");
    std::fs::write(&tools, "{not json").unwrap();
    let o = chatparse(
        &[
            "stream",
            "--schema",
            "qwen3",
            "--tools",
            tools.to_str().unwrap(),
        ],
        Some(b"Hi"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let missing = dir.join("missing.json");
    let o = chatparse(
        &[
            "stream",
            "--schema",
            "qwen3",
            "--tools",
            missing.to_str().unwrap(),
        ],
        Some(b"Hi"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A schema file that is not UTF-8 says so, instead of "check the path".
#[test]
fn non_utf8_schema_file_says_utf8() {
    let dir = std::env::temp_dir().join(format!("chatparse-cli-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let schema = dir.join("latin1.json");
    std::fs::write(
        &schema,
        b"{\"type\": \"object\", \"description\": \"caf\xe9\"}",
    )
    .unwrap();
    let o = chatparse(&["check", schema.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("UTF-8"), "{err}");
    assert!(!err.contains("check the path"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `stream` reads its input in pieces; a UTF-8 error reports the offset in the whole input, not
/// in the read that held it (issue 21). 70,000 bytes arrive in more than one read (reads are at
/// most 64 KiB).
#[test]
fn stream_utf8_error_offset_counts_from_the_start() {
    let mut input = vec![b'a'; 70_000];
    input.push(0xff);
    input.extend_from_slice(b"tail");
    let o = chatparse(&["stream", "--schema", "qwen3"], Some(&input));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("offset 70000"), "{err}");
}

/// Issue 21: a UTF-8 byte order mark before `<think>` ended up inside the reasoning. transformers
/// is given a Python `str`; a file saved with a BOM is read as `utf-8-sig` would, so the CLI's
/// input decoding drops it (whole input, `--jsonl`, `stream`) and the message is the reference's
/// for the text without it. (The library keeps a U+FEFF it is given, as transformers does.)
#[test]
fn a_byte_order_mark_is_dropped_by_the_cli_input_decoding() {
    let text = std::fs::read(repo_root().join("examples/qwen3/thinking_and_answer.txt")).unwrap();
    let mut input = b"\xEF\xBB\xBF".to_vec();
    input.extend_from_slice(&text);
    let expected = reference_value("qwen3", "thinking_and_answer");
    let out = chatparse(&["parse", "--schema", "qwen3", "-"], Some(&input));
    assert!(out.status.success(), "{}", stderr(&out));
    let got: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(same_value(&got, &expected), "{got}");
    let out = chatparse(&["stream", "--schema", "qwen3"], Some(&input));
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = stdout(&out);
    let message: Value = serde_json::from_str(lines.lines().last().unwrap()).unwrap();
    assert!(same_value(&message, &expected), "{lines}");
    let line = serde_json::to_string(std::str::from_utf8(&input[3..]).unwrap()).unwrap();
    let mut jsonl = b"\xEF\xBB\xBF".to_vec();
    jsonl.extend_from_slice(line.as_bytes());
    let out = chatparse(&["parse", "--schema", "qwen3", "--jsonl"], Some(&jsonl));
    assert!(out.status.success(), "{}", stderr(&out));
    let got: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(same_value(&got, &expected), "{got}");
}

/// A parse error says where in the output it is (issue 21, item 6): after the reference's
/// message, whose line and column count from the snippet; `--jsonl` as a `position` key.
#[test]
fn parse_errors_say_where_in_the_output() {
    let input =
        "Let me look.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1,}}\n</tool_call>";
    let offset = input.find("1,").unwrap() + 2;
    let column = offset - input[..offset].rfind('\n').unwrap();
    for engine in ["generated", "interpreted"] {
        let out = chatparse(
            &["parse", "--schema", "hermes", "--engine", engine],
            Some(input.as_bytes()),
        );
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(
            err.contains("content is not valid JSON: Expecting property name"),
            "{err}"
        );
        assert!(
            err.contains(&format!(
                "\n  at byte {offset} (line 3, column {column}) of the output"
            )),
            "{err}"
        );
    }
    let line = Value::String(input.to_owned()).to_string();
    let out = chatparse(
        &["parse", "--schema", "hermes", "--jsonl"],
        Some(format!("{line}\n").as_bytes()),
    );
    let got = chatparse::value::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(
        got["position"],
        chatparse::json!({"offset": offset, "line": 3, "column": column})
    );
}

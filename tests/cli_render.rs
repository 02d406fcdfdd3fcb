//! `chatparse render`: the rendered prompt on stdout; exit 2 on a bad template or argument file,
//! 1 when the template raises. The expected prompts are transformers' renderings stored in
//! tests/render/expected.json (scripts/reference/render_generate.py), not the binary's own output.

mod support;

use std::path::PathBuf;

use chatparse::Value;
use support::run_chatparse;

fn expected() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/render/expected.json");
    chatparse::value::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A scratch directory of this test's own, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_render")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// The stored template named `name`, its files written out; returns (template, messages of
/// `conversation`, tools, extra variables as `--var` arguments, the stored renders).
fn files(dir: &std::path::Path, name: &str, conversation: &str, prompt: bool) -> Vec<String> {
    let doc = expected();
    let t = doc["templates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap();
    let mut messages = doc["messages"][t["messages"].as_str().unwrap()][conversation]
        .as_array()
        .unwrap()
        .clone();
    if prompt {
        messages.pop();
    }
    let mut args = vec![
        "render".to_owned(),
        // The date the reference renderings fix strftime_now to.
        "--date".to_owned(),
        "2026-01-01".to_owned(),
        "--template".to_owned(),
        write(dir, "t.jinja", t["source"].as_str().unwrap()),
        "--messages".to_owned(),
        write(dir, "m.json", &Value::Array(messages).to_string()),
        "--tools".to_owned(),
        write(dir, "tools.json", &doc["tools"].to_string()),
    ];
    for (k, v) in t["extra"].as_object().unwrap() {
        args.push("--var".to_owned());
        args.push(format!("{k}={v}"));
    }
    if prompt {
        args.push("--generation-prompt".to_owned());
    }
    args
}

fn want(name: &str, conversation: &str, prompt: bool) -> Value {
    let doc = expected();
    let t = doc["templates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap()
        .clone();
    t["renders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["conversation"] == conversation && r["add_generation_prompt"] == prompt)
        .unwrap()
        .clone()
}

fn run(args: &[String]) -> std::process::Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_chatparse(&args, None)
}

#[test]
fn render_prints_what_transformers_renders() {
    for (name, conversation, prompt) in [
        ("Qwen-Qwen3-0.6B.jinja", "reasoning_tool_call", false),
        ("Qwen-Qwen3-0.6B.jinja", "reasoning_tool_call", true),
        ("openai-gpt-oss-120b.jinja", "two_tool_calls", false),
        (
            "meta-llama-Llama-3.3-70B-Instruct.jinja",
            "content_only",
            true,
        ),
    ] {
        let dir = scratch(&format!("ok_{}_{prompt}", name.replace('.', "_")));
        let out = run(&files(&dir, name, conversation, prompt));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
        let want = want(name, conversation, prompt);
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            want["output"].as_str().unwrap(),
            "{name} {conversation}"
        );
    }
}

#[test]
fn a_template_that_raises_exits_1_with_its_message() {
    let name = "meta-llama-Llama-3.3-70B-Instruct.jinja";
    let want = want(name, "two_tool_calls", false);
    assert_eq!(want["error"], "TemplateError");
    let dir = scratch("raises");
    let out = run(&files(&dir, name, "two_tool_calls", false));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(want["message"].as_str().unwrap()),
        "{stderr}"
    );
}

#[test]
fn bad_files_and_arguments_exit_2() {
    let dir = scratch("bad");
    let template = write(&dir, "t.jinja", "{% for m in messages %}{{ m.content }}");
    let good_template = write(&dir, "g.jinja", "{{ messages | length }}{{ x }}");
    let messages = write(&dir, "m.json", r#"[{"role": "user", "content": "hi"}]"#);
    let not_array = write(&dir, "o.json", r#"{"role": "user"}"#);
    let not_json = write(&dir, "n.json", "[{");
    let missing = dir.join("missing.json").display().to_string();
    for args in [
        vec!["render", "--template", &template, "--messages", &messages],
        vec!["render", "--template", &missing, "--messages", &messages],
        vec![
            "render",
            "--template",
            &good_template,
            "--messages",
            &not_array,
        ],
        vec![
            "render",
            "--template",
            &good_template,
            "--messages",
            &not_json,
        ],
        vec![
            "render",
            "--template",
            &good_template,
            "--messages",
            &messages,
            "--tools",
            &not_array,
        ],
        vec![
            "render",
            "--template",
            &good_template,
            "--messages",
            &messages,
            "--var",
            "x",
        ],
        vec![
            "render",
            "--template",
            &good_template,
            "--messages",
            &messages,
            "--var",
            "x=hi",
        ],
        vec![
            "render",
            "--template",
            &good_template,
            "--messages",
            &messages,
            "--var",
            "tools=[]",
        ],
    ] {
        let out = run_chatparse(&args, None);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // A JSON value for --var: the template sees a string here.
    let out = run_chatparse(
        &[
            "render",
            "--template",
            &good_template,
            "--messages",
            &messages,
            "--var",
            "x=\"!\"",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "1!");
}

//! `chatparse derive`: the derived schema on stdout (class and notes on stderr), exit 2 with the
//! reason when no faithful parser can be derived; the schema then parses with `chatparse parse`,
//! `--prefix` included.

mod support;

use std::path::PathBuf;

use chatparse::{json, Value};
use support::run_chatparse;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli_derive")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A small ChatML-like template: `<think>` reasoning, `<tool_call>` + JSON calls.
const TAGGED: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n\
{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}\
{{ m.content or '' }}{% for c in m.tool_calls or [] %}\n<tool_call>\n{{ c.function | tojson }}\n</tool_call>{% endfor %}\
<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

/// Calls written as a bare name and JSON, with nothing to tell them from content.
const BARE: &str = "{% for m in messages %}{{ m.role }}: {{ m.content or '' }}\
{% for c in m.tool_calls or [] %}{{ c.function.name }} {{ c.function.arguments | tojson }}{% endfor %}\n\
{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}";

#[test]
fn derive_prints_a_schema_that_parses() {
    let dir = scratch("ok");
    let template = dir.join("t.jinja");
    std::fs::write(&template, TAGGED).unwrap();
    let out = run_chatparse(&["derive", template.to_str().unwrap()], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("json-objects"), "{stderr}");
    let schema = dir.join("derived.json");
    std::fs::write(&schema, &out.stdout).unwrap();
    let prefix = dir.join("prompt.txt");
    std::fs::write(
        &prefix,
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
    )
    .unwrap();
    let output = "<think>\nLook it up.\n</think>\n\nChecking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\", \"n\": 2}}\n</tool_call><|im_end|>";
    for extra in [vec![], vec!["--prefix", prefix.to_str().unwrap()]] {
        let mut args = vec!["parse", "--schema", schema.to_str().unwrap()];
        args.extend(extra);
        let out = run_chatparse(&args, Some(output.as_bytes()));
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let message: Value =
            chatparse::value::from_str(std::str::from_utf8(&out.stdout).unwrap()).unwrap();
        assert_eq!(
            message,
            json!({"role": "assistant", "content": "Checking.", "reasoning_content": "Look it up.",
                "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                    "arguments": {"city": "Zürich", "n": 2}}}]})
        );
    }
}

#[test]
fn derive_refuses_with_the_reason() {
    let dir = scratch("refuse");
    let template = dir.join("t.jinja");
    std::fs::write(&template, BARE).unwrap();
    let out = run_chatparse(&["derive", template.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot be told from content"), "{stderr}");
    // An unreadable template, and a bad --var, are exit 2 too.
    let out = run_chatparse(
        &["derive", dir.join("missing.jinja").to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let out = run_chatparse(
        &["derive", template.to_str().unwrap(), "--var", "x=not json"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
}

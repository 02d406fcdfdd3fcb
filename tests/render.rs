//! `chatparse::render` against transformers, byte for byte: every rendering stored in
//! tests/render/expected.json (made by scripts/reference/render_generate.py with transformers'
//! `apply_chat_template` machinery, strftime_now fixed to 2026-01-01) is rendered again here and
//! must match exactly, or fail where transformers raised. The file embeds the template sources and
//! the messages, so this runs without the chat templates directory (in CI).

use chatparse::render::{ChatTemplate, RenderErrorKind};
use chatparse::{Map, Value};

fn expected() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/render/expected.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    chatparse::value::from_str(&text).unwrap()
}

fn first_difference(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map_or(a.len().min(b.len()), |((i, _), _)| i)
}

/// The characters within 60 bytes of byte `i`.
fn around(s: &str, i: usize) -> String {
    s.char_indices()
        .filter(|(j, _)| j + 60 >= i && *j < i + 60)
        .map(|(_, c)| c)
        .collect()
}

#[test]
fn renders_as_transformers_does() {
    let doc = expected();
    let tools = doc["tools"].as_array().unwrap();
    let mut checked = 0;
    let mut raised = 0;
    let mut problems = Vec::new();
    for t in doc["templates"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        let template = ChatTemplate::new(t["source"].as_str().unwrap())
            .and_then(|t| t.with_fixed_date(2026, 1, 1))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let extra: Map = t["extra"].as_object().unwrap().clone();
        let messages = &doc["messages"][t["messages"].as_str().unwrap()];
        for r in t["renders"].as_array().unwrap() {
            let id = r["conversation"].as_str().unwrap();
            let gp = r["add_generation_prompt"].as_bool().unwrap();
            let mut msgs = messages[id].as_array().unwrap().clone();
            if gp {
                // The prompt: the conversation before its final assistant turn.
                msgs.pop();
            }
            let got = template.apply(&msgs, Some(tools), gp, &extra);
            let wher = format!("{name} {id} (add_generation_prompt={gp})");
            match (r.get("output").and_then(Value::as_str), got) {
                (Some(want), Ok(got)) => {
                    checked += 1;
                    if want != got {
                        let i = first_difference(want, &got);
                        problems.push(format!(
                            "{wher}: differs at byte {i}:\n  transformers {:?}\n  chatparse    {:?}",
                            around(want, i),
                            around(&got, i),
                        ));
                    }
                }
                (None, Err(e)) => {
                    raised += 1;
                    // A template's own raise_exception message comes back word for word.
                    if r["error"] == "TemplateError" {
                        assert_eq!(e.kind(), RenderErrorKind::Raised, "{wher}: {e}");
                        assert_eq!(e.message(), r["message"].as_str().unwrap(), "{wher}");
                    }
                }
                (Some(_), Err(e)) => {
                    problems.push(format!("{wher}: transformers renders, chatparse: {e}"))
                }
                (None, Ok(_)) => problems.push(format!(
                    "{wher}: transformers raises {} ({}), chatparse renders",
                    r["error"], r["message"]
                )),
            }
        }
    }
    eprintln!("{checked} renderings identical to transformers', {raised} raise on both sides");
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(checked >= 290, "only {checked} renderings checked");
}

/// A template is input: one whose loops would run for hours fails with a render error instead
/// (issue 21: no entry point runs unbounded). 10^10 iterations, refused after the fuel runs out.
#[test]
fn a_runaway_template_is_an_error_not_a_hang() {
    let source =
        "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}";
    let template = ChatTemplate::new(source).unwrap();
    let result = template.apply(&[], None, false, &Map::new());
    let error = result.expect_err("runs out of fuel");
    assert!(
        error.to_string().contains("fuel"),
        "the error says why: {error}"
    );
}

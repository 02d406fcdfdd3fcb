//! Grammars checked by a real engine: for every family file of the template round trips
//! (`tests/roundtrip/<name>.json`), the standard conversations are rendered with the family's
//! real chat template (`tests/roundtrip_support`), and so are *violations* (a call of an unknown
//! tool, a missing required argument, a wrong type, a value outside an enum, text after the
//! calls); the final assistant turns, cut at the end-of-turn token, are the outputs. Each
//! family's grammars (GBNF and Lark, under the tool choices `auto`, `required`, `none`, a named
//! tool, and without parallel calls) must accept the valid outputs and reject the violations.
//!
//! The verdicts are two real engines': the fixture (`target/tmp/grammar-check/fixture.json`: per
//! family the grammars, the outputs and whether each must be accepted) is checked by
//! `scripts/check_grammars.py` with the `llguidance` Python package (GBNF, Lark, lazy GBNF,
//! structural tags translated to Lark) and by `scripts/check_grammars_xgrammar.py` with the
//! `xgrammar` package (GBNF, lazy GBNF, structural tags compiled by xgrammar itself), both run by
//! `$CHATPARSE_GRAMMAR_PYTHON` (default `python3`). An engine that is not installed is skipped
//! with a warning, unless `CHATPARSE_REQUIRE_ENGINE=1` (as in `.ci/run`), where it fails.

#[allow(dead_code)]
#[path = "parsers.rs"]
mod parsers_examples;
#[allow(dead_code)]
mod roundtrip_support;
mod support;

use std::path::PathBuf;
use std::process::Command;

use chatparse::grammar::{GrammarSpec, Options, ToolChoice};
use chatparse::{json, Map, Value};
use roundtrip_support as rt;

/// Outputs a family's template renders but its format does not allow (why).
const EXCLUDED: &[(&str, &str, &str)] = &[
    (
        "hermes_2_pro",
        "two_tool_calls",
        "vLLM's Hermes 2 Pro template opens <tool_call> only before the first call",
    ),
    (
        "nemotron_nano_v2",
        "content_only",
        "the template re-opens <think> before a final answer and never closes it",
    ),
    (
        "nemotron_nano_v2",
        "reasoning_content",
        "the template re-opens <think> before a final answer and never closes it",
    ),
];

/// The option sets every family is checked under.
fn option_sets() -> Vec<(&'static str, Options)> {
    vec![
        ("auto", Options::default()),
        (
            "required",
            Options {
                tool_choice: ToolChoice::Required,
                parallel: true,
            },
        ),
        (
            "none",
            Options {
                tool_choice: ToolChoice::None,
                parallel: true,
            },
        ),
        (
            "named_search_web",
            Options {
                tool_choice: ToolChoice::Named("search_web".into()),
                parallel: true,
            },
        ),
        (
            "no_parallel",
            Options {
                tool_choice: ToolChoice::Auto,
                parallel: false,
            },
        ),
    ]
}

/// The output of a rendered turn: up to the first end-of-turn token.
fn output(tail: &str, end_tokens: &[String]) -> String {
    let cut = end_tokens
        .iter()
        .filter_map(|t| tail.find(t.as_str()))
        .min()
        .unwrap_or(tail.len());
    tail[..cut].to_owned()
}

/// Violations: a standard conversation with its final calls changed.
fn violations() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "unknown_tool",
            "one_tool_call",
            json!([{"name": "get_time", "arguments": {"location": "Paris, France"}}]),
        ),
        (
            "missing_required_argument",
            "one_tool_call",
            json!([{"name": "search_web", "arguments": {"max_results": 3}}]),
        ),
        (
            "wrong_type",
            "one_tool_call",
            json!([{"name": "search_web", "arguments": {"query": "Paris", "max_results": "three"}}]),
        ),
        (
            "outside_enum",
            "one_tool_call",
            json!([{"name": "get_weather", "arguments": {"location": "Paris, France", "unit": "kelvin"}}]),
        ),
        (
            "unknown_argument",
            "one_tool_call",
            json!([{"name": "get_weather", "arguments": {"city": "Paris"}}]),
        ),
    ]
}

/// A tool whose schema uses the rest of the JSON-Schema subset: a nested object with a required
/// key, an array of enum strings, `anyOf` with null, a `$ref` to `$defs`.
fn book_table() -> Value {
    json!({"type": "function", "function": {"name": "book_table",
    "description": "Book a table.",
    "parameters": {
        "type": "object",
        "properties": {
            "party": {"type": "object", "properties": {
                "adults": {"type": "integer"}, "children": {"type": "integer"}},
                "required": ["adults"]},
            "time": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["quiet", "window", "outside"]}},
            "budget": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "contact": {"$ref": "#/$defs/contact"}
        },
        "required": ["party", "time"],
        "$defs": {"contact": {"type": "object", "properties": {"phone": {"type": "string"}},
            "required": ["phone"]}}
    }}})
}

/// Arguments of `book_table`: valid by JSON Schema or not (what), as the schema says.
fn book_table_calls() -> Vec<(&'static str, bool, Value)> {
    vec![
        (
            "book_table_full",
            true,
            json!({"party": {"adults": 2, "children": 1}, "time": "19:30",
            "tags": ["window", "quiet"], "budget": 120.5, "contact": {"phone": "+41 44 000"}}),
        ),
        (
            "book_table_minimal",
            true,
            json!({"party": {"adults": 2}, "time": "19:30", "budget": null}),
        ),
        (
            "book_table_nested_required_missing",
            false,
            json!({"party": {"children": 1}, "time": "19:30"}),
        ),
        (
            "book_table_nested_wrong_type",
            false,
            json!({"party": {"adults": "two"}, "time": "19:30"}),
        ),
        (
            "book_table_array_item_outside_enum",
            false,
            json!({"party": {"adults": 2}, "time": "19:30", "tags": ["noisy"]}),
        ),
        (
            "book_table_anyof_violated",
            false,
            json!({"party": {"adults": 2}, "time": "19:30", "budget": "cheap"}),
        ),
        (
            "book_table_ref_required_missing",
            false,
            json!({"party": {"adults": 2}, "time": "19:30", "contact": {}}),
        ),
    ]
}

struct Case {
    what: String,
    text: String,
    /// Per option set: accepted?
    accept: Vec<(&'static str, bool)>,
}

fn has_calls(conversation: &str) -> bool {
    !matches!(conversation, "content_only" | "reasoning_content")
}

fn family_fixture(name: &str, templates: &std::path::Path) -> Result<Value, String> {
    let family = rt::Family::load(name).map_err(|e| e.join("; "))?;
    let mut std = rt::standard();
    std.tools.as_array_mut().unwrap().push(book_table());
    let sets = option_sets();
    let mut grammars = Map::new();
    let mut end_tokens = Vec::new();
    let mut lazy = Value::Null;
    for (label, opts) in &sets {
        let spec = GrammarSpec::new(&family.schema, &std.tools, opts).map_err(|e| e.to_string())?;
        end_tokens = spec.end_tokens().to_vec();
        grammars.insert(
            label.to_string(),
            json!({"gbnf": spec.gbnf(), "lark": spec.lark(), "structural_tag": spec.structural_tag()}),
        );
        if *label == "auto" {
            let special: Vec<String> = spec
                .special_tokens()
                .iter()
                .filter(|t| t.starts_with('<') && t.ends_with('>'))
                .cloned()
                .collect();
            grammars.get_mut("auto").unwrap()["lark_special"] =
                json!({"lark": spec.lark_with_special_tokens(&special), "special_tokens": special});
        }
        let fields = spec.llama_cpp();
        if *label == "auto" && fields["grammar_lazy"] == true {
            lazy = json!({
                "gbnf": fields["grammar"],
                "triggers": fields["grammar_triggers"].as_array().unwrap()
                    .iter().map(|t| t["value"].clone()).collect::<Vec<_>>(),
            });
        }
    }
    let mut renderer = rt::load_renderer(&family, &std, templates)?;
    let mut cases: Vec<Case> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for id in rt::CONVERSATIONS {
        if let Some((_, _, why)) = EXCLUDED.iter().find(|(f, c, _)| *f == name && *c == id) {
            notes.push(format!("{id}: excluded ({why})"));
            continue;
        }
        let turn = match rt::render_turn(&family, &std, &mut renderer, id) {
            Ok(t) => t,
            Err(_) => {
                notes.push(format!("{id}: not rendered (the family skips it)"));
                continue;
            }
        };
        let text = output(&turn.tail, &end_tokens);
        let calls: Vec<String> = turn
            .original
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|c| c["function"]["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        // What the rendering really holds: gpt-oss renders only the first call.
        let rendered_calls: Vec<&String> =
            calls.iter().filter(|n| text.contains(n.as_str())).collect();
        let n_calls = if family.schema == "gpt_oss" {
            calls.len().min(1)
        } else {
            rendered_calls.len().max(calls.len().min(1))
        };
        let accept = sets
            .iter()
            .map(|(label, _)| {
                let ok = match *label {
                    "auto" => true,
                    "required" => n_calls > 0,
                    "none" => n_calls == 0,
                    "named_search_web" => n_calls > 0 && calls.iter().all(|c| c == "search_web"),
                    "no_parallel" => n_calls <= 1,
                    _ => unreachable!(),
                };
                (*label, ok)
            })
            .collect();
        let _ = has_calls(id);
        cases.push(Case {
            what: id.to_owned(),
            text: text.clone(),
            accept,
        });
        // Text after the calls, where the format ends with them.
        if n_calls > 0 && family.schema != "gemma4" {
            cases.push(Case {
                what: format!("{id}+text_after_calls"),
                text: format!("{}\nDone, the weather is fine.", text.trim_end()),
                accept: sets.iter().map(|(l, _)| (*l, false)).collect(),
            });
        }
    }
    // Violations, and calls of the schema-subset tool, rendered by the template.
    let mut changed: Vec<(&str, &str, Value, bool)> = violations()
        .into_iter()
        .map(|(what, base, calls)| (what, base, calls, false))
        .collect();
    for (what, valid, arguments) in book_table_calls() {
        changed.push((
            what,
            "one_tool_call",
            json!([{"name": "book_table", "arguments": arguments}]),
            valid,
        ));
    }
    for (what, base, calls, valid) in changed {
        let mut std2 = rt::standard();
        std2.tools.as_array_mut().unwrap().push(book_table());
        let conv = std2.conversations.get_mut(base).unwrap();
        let last = conv.as_array_mut().unwrap().last_mut().unwrap();
        last["tool_calls"] = calls;
        let stated = family.conversations.get(base);
        if stated.is_some_and(|s| s.skip.is_some()) {
            continue;
        }
        let turn = match rt::render_turn(&family, &std2, &mut renderer, base) {
            Ok(t) => t,
            Err(_) => continue,
        };
        let text = output(&turn.tail, &end_tokens);
        cases.push(Case {
            what: what.to_owned(),
            text,
            accept: sets
                .iter()
                .map(|(l, _)| {
                    (
                        *l,
                        valid && matches!(*l, "auto" | "required" | "no_parallel"),
                    )
                })
                .collect(),
        });
    }
    let cases: Vec<Value> = cases
        .into_iter()
        .map(|c| {
            let accept: Map = c
                .accept
                .into_iter()
                .map(|(l, a)| (l.to_owned(), Value::Bool(a)))
                .collect();
            json!({"what": c.what, "text": c.text, "accept": accept})
        })
        .collect();
    Ok(json!({
        "family": name,
        "schema": family.schema,
        "grammars": grammars,
        "lazy": lazy,
        "cases": cases,
        "notes": notes,
    }))
}

fn python() -> String {
    std::env::var("CHATPARSE_GRAMMAR_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Whether the engine's Python package loads: `import llguidance`; for xgrammar, the checker's
/// own torch-free loader (`--version`).
fn engine_available(python: &str, engine: &str, script: &std::path::Path) -> bool {
    let mut cmd = Command::new(python);
    if engine == "xgrammar" {
        cmd.arg(script).arg("--version");
    } else {
        cmd.args(["-c", &format!("import {engine}")]);
    }
    cmd.output().is_ok_and(|o| o.status.success())
}

#[test]
fn grammars_accept_the_templates_outputs_and_reject_violations() {
    let Some(templates) = rt::templates_dir() else {
        eprintln!("!!! GRAMMAR CHECK SKIPPED: chat templates not found");
        return;
    };
    let mut families = Vec::new();
    let mut problems = Vec::new();
    let only = std::env::var("CHATPARSE_GRAMMAR_FAMILY").ok();
    for name in rt::family_names() {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        match family_fixture(&name, &templates) {
            Ok(f) => families.push(f),
            Err(e) => problems.push(format!("{name}: {e}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    if only.is_none() {
        families.extend(parser_fixtures());
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("grammar-check");
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = dir.join("fixture.json");
    std::fs::write(
        &fixture,
        chatparse::value::to_string_pretty(&json!({"families": families})),
    )
    .unwrap();
    let python = python();
    let require = std::env::var("CHATPARSE_REQUIRE_ENGINE").is_ok_and(|v| v == "1");
    let mut ran = Vec::new();
    for (engine, script, install) in [
        (
            "llguidance",
            "scripts/check_grammars.py",
            "pip install llguidance",
        ),
        (
            "xgrammar",
            "scripts/check_grammars_xgrammar.py",
            "pip install pydantic; pip install --no-deps xgrammar apache-tvm-ffi",
        ),
    ] {
        let script = rt::repo_root().join(script);
        if !engine_available(&python, engine, &script) {
            let msg = format!(
                "{engine} is not importable by {python} ({install}; or set CHATPARSE_GRAMMAR_PYTHON)"
            );
            assert!(!require, "{msg}");
            eprintln!("!!! GRAMMAR ENGINE CHECK SKIPPED ({engine}): {msg}");
            continue;
        }
        let out = Command::new(&python)
            .arg(&script)
            .arg(&fixture)
            .output()
            .expect("run the checker");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        println!("== {engine}\n{stdout}");
        assert!(
            out.status.success(),
            "{} {}:\n{stdout}\n{stderr}",
            script.display(),
            fixture.display()
        );
        ran.push(engine);
    }
    println!("grammar engines run: {ran:?}");
}

/// Every shipped family has a grammar, for every option set and output format.
#[test]
fn every_family_builds_in_every_format() {
    let std = rt::standard();
    for name in chatparse::grammar::family_names() {
        for (label, opts) in option_sets() {
            let spec = GrammarSpec::new(name, &std.tools, &opts)
                .unwrap_or_else(|e| panic!("{name} {label}: {e}"));
            assert!(spec.gbnf().starts_with("root ::="), "{name} {label}");
            assert!(spec.lark().contains("start:"), "{name} {label}");
            assert_eq!(spec.structural_tag()["type"], "structural_tag");
            assert!(spec.llama_cpp()["grammar"].is_string());
            assert!(!spec.format_instruction().is_empty());
        }
    }
}

/// `chatparse grammar` prints the library's grammars; bad arguments exit 2.
#[test]
fn cli_prints_the_library_grammars() {
    let std = rt::standard();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("grammar-cli");
    std::fs::create_dir_all(&dir).unwrap();
    let tools = dir.join("tools.json");
    std::fs::write(&tools, serde_json::to_string(&std.tools).unwrap()).unwrap();
    let tools = tools.display().to_string();
    let run = |extra: &[&str]| {
        let mut args = vec!["grammar", "--tools", tools.as_str()];
        args.extend_from_slice(extra);
        support::run_chatparse(&args, None)
    };
    let opts = Options {
        tool_choice: ToolChoice::Named("search_web".into()),
        parallel: false,
    };
    let spec = GrammarSpec::new("qwen3", &std.tools, &opts).unwrap();
    let common = [
        "--schema",
        "qwen3",
        "--tool-choice",
        "search_web",
        "--no-parallel",
        "--format",
    ];
    for (format, want) in [
        ("gbnf", spec.gbnf()),
        ("lark", spec.lark()),
        ("instruction", spec.format_instruction() + "\n"),
    ] {
        let mut args = common.to_vec();
        args.push(format);
        let out = run(&args);
        assert!(out.status.success(), "{format}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "{format}");
    }
    for (format, want) in [
        ("structural-tag", spec.structural_tag()),
        ("llama-cpp", spec.llama_cpp()),
    ] {
        let mut args = common.to_vec();
        args.push(format);
        let out = run(&args);
        assert!(out.status.success(), "{format}: {out:?}");
        let got: Value =
            chatparse::value::from_str(std::str::from_utf8(&out.stdout).unwrap()).unwrap();
        assert_eq!(got, want, "{format}");
    }
    // A schema path whose stem is a family.
    let out = run(&["--schema", "schemas/hermes.json", "--format", "gbnf"]);
    assert!(out.status.success(), "{out:?}");
    for bad in [
        vec!["--schema", "no_such_family", "--format", "gbnf"],
        vec![
            "--schema",
            "hermes",
            "--tool-choice",
            "get_time",
            "--format",
            "gbnf",
        ],
    ] {
        let out = run(&bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: "));
    }
}

/// llama.cpp's lazy grammar: triggers and preserved tokens under `auto`; the whole output under
/// `required`.
#[test]
fn llama_cpp_fields() {
    let std = rt::standard();
    let auto = GrammarSpec::new("hermes", &std.tools, &Options::default()).unwrap();
    let f = auto.llama_cpp();
    assert_eq!(f["grammar_lazy"], true);
    assert_eq!(
        f["grammar_triggers"],
        json!([{"type": "word", "value": "<tool_call>"}])
    );
    assert!(f["preserved_tokens"]
        .as_array()
        .unwrap()
        .contains(&json!("<tool_call>")));
    assert!(f["grammar"]
        .as_str()
        .unwrap()
        .starts_with("root ::= calls-root"));
    let required = GrammarSpec::new(
        "hermes",
        &std.tools,
        &Options {
            tool_choice: ToolChoice::Required,
            parallel: true,
        },
    )
    .unwrap();
    let f = required.llama_cpp();
    assert_eq!(f["grammar_lazy"], false);
    assert_eq!(f["grammar"].as_str().unwrap(), required.gbnf());
}

/// The AgentScope-style parsers' grammars, on the outputs of AgentScope's documentation
/// (accepted) and on outputs missing a tag, closing nothing or holding bad JSON (rejected).
fn parser_fixtures() -> Vec<Value> {
    use chatparse::parsers::{MarkdownCodeBlockParser, MarkdownJsonParser};
    let werewolf = parsers_examples::werewolf();
    let w = parsers_examples::WEREWOLF_OUTPUT;
    let code = MarkdownCodeBlockParser::new("python", "your python code");
    let list = MarkdownJsonParser::object("{A list of numbers.}");
    let dict = MarkdownJsonParser::dict(
        &json!({"thought": "…", "speak": "…"}),
        &["thought", "speak"],
    );
    type Cases = Vec<(&'static str, String, bool)>;
    let shapes: Vec<(&str, chatparse::parsers::ShapeGrammar, Cases)> = vec![
        ("parsers::multi_tagged", werewolf.grammar(), vec![
            ("documented", w.to_owned(), true),
            ("no_text_around", w.trim().lines().skip(1).collect::<Vec<_>>().join("\n"), true),
            ("json_not_json", w.replace("]true[", "]maybe["), false),
            ("tag_missing", w.replace("[SPEAK]I agree with you.[/SPEAK]\n", ""), false),
            ("tags_out_of_order", "[SPEAK]a[/SPEAK][THOUGHT]b[/THOUGHT][FINISH_DISCUSSION]false[/FINISH_DISCUSSION]".into(), false),
        ]),
        ("parsers::code_block", code.grammar(), vec![
            ("documented", "The following is generated python code\n```python\nprint(\"Hello world!\")\n```\n".into(), true),
            ("never_closed", "```python\nx = 1\n".into(), false),
            ("other_language", "```js\nx = 1\n```".into(), false),
        ]),
        ("parsers::json_object", list.grammar(), vec![
            ("documented", "Yes, here is the generated list\n```json\n[1,2,3,4,5]\n```\n".into(), true),
            ("bad_json", "```json\n[1,2,\n```".into(), false),
        ]),
        ("parsers::json_dict", dict.grammar(), vec![
            ("keys", "```json\n{\"thought\": \"t\", \"speak\": \"s\", \"extra\": 1}\n```".into(), true),
            ("key_missing", "```json\n{\"thought\": \"t\"}\n```".into(), false),
            ("not_an_object", "```json\n[1]\n```".into(), false),
        ]),
    ];
    shapes
        .into_iter()
        .map(|(name, g, cases)| {
            let gbnf = g.gbnf();
            json!({
                "family": name,
                "schema": name,
                "grammars": {"auto": {"gbnf": gbnf, "lark": g.lark(),
                    "structural_tag": {"type": "structural_tag", "format": {"type": "grammar", "grammar": gbnf}}}},
                "lazy": null,
                "cases": cases.into_iter().map(|(what, text, ok)| json!({"what": what, "text": text, "accept": {"auto": ok}})).collect::<Vec<_>>(),
                "notes": [],
            })
        })
        .collect()
}

//! chatparse's AgentScope-style parsers against the `agentscope` package's own (0.1.6, the last
//! release with `agentscope.parsers`): every parser of the corpus below — the documentation's
//! examples and edge cases (missing and extra keys, fenced blocks of other languages, unclosed
//! blocks, nested braces, repeated tags, whitespace, routing to content / memory / metadata with
//! and without `allow_missing`) — is built from one spec on both sides; the instructions, the
//! parses and the routings must be the package's. The expectations are the package's results,
//! computed by `scripts/check_agentscope.py` (run by `$CHATPARSE_GRAMMAR_PYTHON`, default
//! `python3`) from the corpus this test writes (`target/tmp/agentscope-check/corpus.json`).
//! Without the package the comparison is skipped with a warning, unless
//! `CHATPARSE_REQUIRE_ENGINE=1` (as in `.ci/run`), where it fails.
//!
//! Cases marked `known` are judged differences (the package must disagree there, and the
//! script lists them with the reason).

use std::path::PathBuf;
use std::process::Command;

use chatparse::parsers::{
    KeyRouting, Keys, MarkdownCodeBlockParser, MarkdownJsonParser, MultiTaggedContentParser,
    ParserError, RegexTaggedContentParser, TaggedContent,
};
use chatparse::{json, Map, Value};

enum Parser {
    Code(MarkdownCodeBlockParser),
    Json(MarkdownJsonParser),
    Multi(MultiTaggedContentParser),
    Regex(RegexTaggedContentParser),
}

fn keys(v: &Value) -> Keys {
    match v {
        Value::Bool(b) => Keys::from(*b),
        Value::String(s) => Keys::key(s),
        Value::Array(a) => Keys::List(a.iter().map(|k| k.as_str().unwrap().to_owned()).collect()),
        other => panic!("keys: {other}"),
    }
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap()).collect())
        .unwrap_or_default()
}

/// The parser a spec describes (the script builds the package's from the same spec).
fn build(spec: &Value) -> Parser {
    let r = &spec["routing"];
    macro_rules! route {
        ($p:expr) => {{
            let mut p = $p;
            if !r["content"].is_null() {
                p = p.keys_to_content(keys(&r["content"]));
            }
            if !r["memory"].is_null() {
                p = p.keys_to_memory(keys(&r["memory"]));
            }
            if !r["metadata"].is_null() {
                p = p.keys_to_metadata(keys(&r["metadata"]));
            }
            p
        }};
    }
    match spec["kind"].as_str().unwrap() {
        "code_block" => {
            let lang = spec["language"].as_str().unwrap();
            Parser::Code(match spec["content_hint"].as_str() {
                Some(h) => MarkdownCodeBlockParser::new(lang, h),
                None => MarkdownCodeBlockParser::with_default_hint(lang),
            })
        }
        "json_object" => Parser::Json(MarkdownJsonParser::object(
            spec["content_hint"].as_str().unwrap(),
        )),
        "json_dict" => Parser::Json(route!(MarkdownJsonParser::dict(
            &spec["content_hint"],
            &strs(&spec["required_keys"]),
        ))),
        "multi_tagged" => {
            let tags = spec["tags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let s = |k: &str| t[k].as_str().unwrap();
                    let tag = TaggedContent::new(
                        s("name"),
                        s("tag_begin"),
                        s("content_hint"),
                        s("tag_end"),
                    );
                    if t["parse_json"] == true {
                        tag.parse_json()
                    } else {
                        tag
                    }
                })
                .collect();
            let mut p = MultiTaggedContentParser::new(tags);
            if !spec["keys_allow_missing"].is_null() {
                p = p.allow_missing(&strs(&spec["keys_allow_missing"]));
            }
            Parser::Multi(route!(p))
        }
        "regex_tagged" => {
            let mut p = match spec["pattern"].as_str() {
                Some(pat) => RegexTaggedContentParser::with_pattern(pat).unwrap(),
                None => RegexTaggedContentParser::new(),
            };
            if let Some(i) = spec["format_instruction"].as_str() {
                p = p.with_format_instruction(i);
            }
            if spec["try_parse_json"] == false {
                p = p.try_parse_json(false);
            }
            p = p.required_keys(&strs(&spec["required_keys"]));
            Parser::Regex(route!(p))
        }
        other => panic!("kind {other}"),
    }
}

fn result(r: Result<Value, ParserError>) -> Value {
    match r {
        Ok(v) => json!({"ok": v}),
        Err(e) => {
            let (kind, items): (&str, Vec<String>) = match e {
                ParserError::TagNotFound(t) => ("TagNotFound", t),
                ParserError::Json(m) => ("Json", vec![m]),
                ParserError::NotAnObject => ("NotAnObject", vec![]),
                ParserError::MissingKeys(k) => ("MissingKeys", k),
                ParserError::KeyNotFound(k) => ("KeyNotFound", vec![k]),
                ParserError::Regex(m) => ("Regex", vec![m]),
            };
            json!({"error": kind, "items": items})
        }
    }
}

fn routing_results(routing: &KeyRouting, parsed: &Map) -> Value {
    let mut out = Map::new();
    for (target, keys) in [
        ("content", &routing.content),
        ("memory", &routing.memory),
        ("metadata", &routing.metadata),
    ] {
        let one = |allow| result(keys.filter(parsed, allow).map(|v| v.unwrap_or(Value::Null)));
        out.insert(
            target.into(),
            json!({"strict": one(false), "allow_missing": one(true)}),
        );
    }
    Value::Object(out)
}

/// Our instruction and, per text, our parse and routings.
fn ours(spec: &Value, texts: &[(String, Option<&str>)]) -> (Value, Vec<Value>) {
    let parser = build(spec);
    let instruction = match &parser {
        Parser::Code(p) => Value::String(p.format_instruction()),
        Parser::Json(p) => Value::String(p.format_instruction()),
        Parser::Multi(p) => Value::String(p.format_instruction()),
        Parser::Regex(p) => p.format_instruction().map_or(Value::Null, Value::from),
    };
    let cases = texts
        .iter()
        .map(|(text, known)| {
            let (parsed, routing) = match &parser {
                Parser::Code(p) => (p.parse(text).map(Value::from), None),
                Parser::Json(p) => (p.parse(text), Some(p.routing())),
                Parser::Multi(p) => (p.parse(text).map(Value::Object), Some(p.routing())),
                Parser::Regex(p) => (p.parse(text).map(Value::Object), Some(p.routing())),
            };
            let mut case = json!({"text": text, "ours": result(parsed.clone())});
            if spec["kind"] != "json_object" {
                if let (Ok(Value::Object(m)), Some(r)) = (&parsed, routing) {
                    case["routing"] = routing_results(r, m);
                }
            }
            if let Some(why) = known {
                case["known"] = Value::from(*why);
            }
            case
        })
        .collect();
    (json!({"instruction": instruction}), cases)
}

const WEREWOLF: &str = "As a werewolf, I should keep pretending to be a villager
[THOUGHT]The others didn't realize I was a werewolf. I should end the discussion soon.[/THOUGHT]
[SPEAK]I agree with you.[/SPEAK]
[FINISH_DISCUSSION]true[/FINISH_DISCUSSION]
";

const NAN: &str = "json.loads reads NaN (and 1e400, as inf) as a float; chatparse's value type \
(JSON) cannot carry it, so the parse fails with a JSON error";
const NAN_REGEX: &str = "json.loads reads NaN as a float; chatparse's value type (JSON) cannot \
carry it, so the value stays the tag's text";

/// Texts, each with the reason of a judged difference where the package must disagree.
type Texts = Vec<(String, Option<&'static str>)>;

/// The corpus: (id, spec, texts).
fn corpus() -> Vec<(&'static str, Value, Texts)> {
    let t = |s: &str| (s.to_owned(), None);
    let werewolf_tags = json!([
        {"name": "thought", "tag_begin": "[THOUGHT]", "content_hint": "what you thought", "tag_end": "[/THOUGHT]", "parse_json": false},
        {"name": "speak", "tag_begin": "[SPEAK]", "content_hint": "what you speak", "tag_end": "[/SPEAK]", "parse_json": false},
        {"name": "finish_discussion", "tag_begin": "[FINISH_DISCUSSION]", "content_hint": "true/false, whether the discussion is finished", "tag_end": "[/FINISH_DISCUSSION]", "parse_json": true}
    ]);
    let werewolf_texts = vec![
        t(WEREWOLF),
        t(&WEREWOLF.replace("]true[", "]maybe[")),
        t(&WEREWOLF.replace("]true[", "] \n false\t[")),
        t(&WEREWOLF.replace("[SPEAK]I agree with you.[/SPEAK]\n", "")),
        t(&WEREWOLF.replace("[/SPEAK]", "")),
        t("[SPEAK]a[/SPEAK][THOUGHT]b[/THOUGHT][FINISH_DISCUSSION]false[/FINISH_DISCUSSION]"),
        t("[THOUGHT]1[/THOUGHT][THOUGHT]2[/THOUGHT][SPEAK]s[/SPEAK][SPEAK]t[/SPEAK][FINISH_DISCUSSION]{\"a\": [1, {\"b\": null}]}[/FINISH_DISCUSSION]"),
        t("[THOUGHT][THOUGHT]nested[/THOUGHT][/THOUGHT][SPEAK][/SPEAK][FINISH_DISCUSSION]2[/FINISH_DISCUSSION]"),
        (
            "[THOUGHT]a[/THOUGHT][SPEAK]b[/SPEAK][FINISH_DISCUSSION]1e400[/FINISH_DISCUSSION]".into(),
            Some(NAN),
        ),
        t("[/THOUGHT][THOUGHT]x[SPEAK]y[/SPEAK][FINISH_DISCUSSION]\"z\"[/FINISH_DISCUSSION]"),
        t(""),
        (
            WEREWOLF.replace("]true[", "]NaN["),
            Some(NAN),
        ),
    ];
    let mut out = vec![
        (
            "code_block_python",
            json!({"kind": "code_block", "language": "python", "content_hint": "your python code"}),
            vec![
                t("The following is generated python code\n```python\nprint(\"Hello world!\")\n```\n"),
                t("```python\nx = 1\n"),
                t("no block at all"),
                t("```js\nx = 1\n```"),
                t("```python3\nx = 1\n```"),
                t("```python\na\n```\n```python\nb\n```"),
                t("```python\ns = '```'\n```"),
                t("```\nplain\n```"),
                t("``` python\nx\n```"),
                t("```python```"),
                t("  ```python\r\n\tx = 1\r\n```  "),
            ],
        ),
        (
            "code_block_default_hint",
            json!({"kind": "code_block", "language": "sql", "content_hint": null}),
            vec![t("```sql\nSELECT 1;\n```")],
        ),
        (
            "code_block_cpp",
            json!({"kind": "code_block", "language": "c++", "content_hint": "code"}),
            vec![t("```c++\nint x;\n```"), t("```c\nint x;\n```"), t("```c++```c++```")],
        ),
        (
            "json_object",
            json!({"kind": "json_object", "content_hint": "{A list of numbers.}"}),
            vec![
                t("Yes, here is the generated list\n```json\n[1,2,3,4,5]\n```\n"),
                t("[1, 2]"),
                t("```json\n{\"a\": 1}"),
                t("{\"a\": 1}\n```"),
                t("```json\n[1,2,\n```"),
                t("```JSON\n{}\n```"),
                t("```json {\"a\": {\"b\": [1, {\"c\": \"}\"}]}} ```"),
                t("```json\n{\"a\": \"```\"}\n```"),
                t("```json\n{} extra\n```"),
                t("```json\n\t {\"a\": 1}\r\n```"),
                t("```json\n\u{a0}{\"a\": 1}\n```"),
                t("```json\n{\"a\": 1, \"a\": 2, \"b\": 3}\n```"),
                t("```json\n12345678901234567890123\n```"),
                t("```json\n\"text\"\n```"),
                t("```json\n1.0\n```"),
                t("```json\n\n```"),
                t("```json```"),
                t("```json\n[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]\n```"),
                t("```json\n\u{feff}[1]\n```"),
                t("```json\n\"\\u00e9\\ud83d\\ude00\"\n```"),
                (
                    "```json\n\"\\ud800\"\n```".into(),
                    Some("json.loads keeps a lone surrogate in a str; a Rust String cannot hold one, \
                          so the parse fails with a JSON error"),
                ),
                (
                    format!("```json\n{}{}\n```", "[".repeat(1200), "]".repeat(1200)),
                    Some("Python's json.loads raises RecursionError (not a JSON error, so \
                          AgentScope lets it through) past its recursion limit; chatparse's copy \
                          stops at the same depth with a JSON error"),
                ),
                t("```python\n{\"a\": 1}\n```"),
                t("```json\n{\"a\": 1}\n```\n```json\n{\"b\": 2}\n```"),
                t(""),
                ("```json\nNaN\n```".into(), Some(NAN)),
            ],
        ),
    ];
    let dict_texts = vec![
        t("```json\n{\"thought\": \"t\", \"speak\": \"s\", \"finish_discussion\": true}\n```"),
        t("```json\n{\"thought\": \"t\", \"speak\": \"s\", \"finish_discussion\": false, \"extra\": [1]}\n```"),
        t("```json\n{\"thought\": \"t\"}\n```"),
        t("```json\n{\"speak\": \"s\"}\n```"),
        t("```json\n{}\n```"),
        t("```json\n[1]\n```"),
        t("```json\n\"thought\"\n```"),
        t("{\"thought\": \"t\", \"speak\": \"s\", \"finish_discussion\": true}"),
        t("```json\n{\"thought\": \"t\", \"speak\": \"s\", \"finish_discussion\": tru}\n```"),
        t("Sure.\n```json\n{\"speak\": \"{nested}\", \"thought\": {\"deep\": {\"x\": [\"}\"]}}, \"finish_discussion\": null}\n```\nBye"),
    ];
    out.push((
        "json_dict_documented_routing",
        json!({"kind": "json_dict",
            "content_hint": {"thought": "what you thought", "speak": "what you speak", "finish_discussion": "whether the discussion is finished"},
            "required_keys": ["thought", "speak", "finish_discussion"],
            "routing": {"content": "speak", "memory": ["thought", "speak"], "metadata": ["finish_discussion"]}}),
        dict_texts.clone(),
    ));
    out.push((
        "json_dict_defaults",
        json!({"kind": "json_dict", "content_hint": null, "required_keys": [], "routing": {}}),
        dict_texts.clone(),
    ));
    out.push((
        "json_dict_text_hint",
        json!({"kind": "json_dict", "content_hint": "{\n  \"thought\": \"what you thought\",\n  \"speak\": \"what you speak\",\n}",
            "required_keys": ["speak"],
            "routing": {"content": true, "memory": false, "metadata": "thought"}}),
        dict_texts.clone(),
    ));
    out.push((
        "json_dict_unicode_hint",
        json!({"kind": "json_dict", "content_hint": {"回答": "你的回答", "n": 1, "ok": true, "list": [null, 2.5, 1e20, 1e-7, 100.0, -0.0]},
            "required_keys": ["thought", "speak", "finish_discussion", "other"],
            "routing": {"content": ["speak", "missing"], "memory": ["finish_discussion"], "metadata": ["thought", "speak"]}}),
        dict_texts,
    ));
    out.push((
        "multi_tagged_werewolf",
        json!({"kind": "multi_tagged", "tags": werewolf_tags, "routing": {"content": "speak", "memory": ["thought", "speak"], "metadata": ["finish_discussion"]}}),
        werewolf_texts.clone(),
    ));
    out.push((
        "multi_tagged_allow_missing",
        json!({"kind": "multi_tagged", "tags": werewolf_tags, "keys_allow_missing": ["speak", "finish_discussion"],
            "routing": {"content": ["speak"], "memory": "speak", "metadata": true}}),
        werewolf_texts,
    ));
    out.push((
        "multi_tagged_plain",
        json!({"kind": "multi_tagged", "tags": [
            {"name": "a", "tag_begin": "<a>", "content_hint": "A", "tag_end": "</a>", "parse_json": false},
            {"name": "b", "tag_begin": "<b>", "content_hint": "B", "tag_end": "</b>", "parse_json": false}]}),
        vec![
            t("<a>1</a><b>2</b>"),
            t("<b>2</b> and <a>1</a>"),
            t("<a><b>x</b></a>"),
            t("<a>1</b>"),
            t("<a>\n  spaced \n</a><b></b>"),
        ],
    ));
    out.push((
        "multi_tagged_two_json",
        json!({"kind": "multi_tagged", "tags": [
            {"name": "x", "tag_begin": "[X]", "content_hint": "a number", "tag_end": "[/X]", "parse_json": true},
            {"name": "y", "tag_begin": "[Y]", "content_hint": "a list", "tag_end": "[/Y]", "parse_json": true}]}),
        vec![
            t("[X] 1 [/X][Y][1, \"2\"][/Y]"),
            t("[X]1[/X][Y][1, [/Y]"),
            t("[X]-0[/X][Y]{\"k\": {\"k\": {}}}[/Y]"),
        ],
    ));
    let regex_texts = vec![
        t("<thought>I think</thought>\n<speak>{\"a\": 1}</speak>"),
        t("<n>42</n><b>true</b><s>\"quoted\"</s><l>[1, 2]</l><x>not json</x>"),
        t("<a>1</><b> 2 </b>"),
        t("<a>first</a><a>second</a><b>b</b><a>third</a>"),
        t("<a><b>1</b></a>"),
        t("<a x=\"1\">v</a x=\"1\">"),
        t("<a>multi\nline\n</a>"),
        t("<a>unclosed"),
        t("no tags"),
        t("<a></a>"),
        t("</a><a>x</a>"),
        t("<a>x</b></a>"),
    ];
    out.push((
        "regex_tagged_default",
        json!({"kind": "regex_tagged", "pattern": null, "format_instruction": null, "required_keys": null}),
        regex_texts
            .iter()
            .cloned()
            .chain([("<a>NaN</a>".to_owned(), Some(NAN_REGEX))])
            .collect(),
    ));
    out.push((
        "regex_tagged_required_routing",
        json!({"kind": "regex_tagged", "pattern": null,
            "format_instruction": "Respond with <thought>...</thought> and <speak>...</speak>.",
            "required_keys": ["a", "b"],
            "routing": {"content": "a", "memory": ["a", "b", "c"], "metadata": false}}),
        regex_texts.clone(),
    ));
    out.push((
        "regex_tagged_no_json",
        json!({"kind": "regex_tagged", "pattern": null, "format_instruction": "x", "try_parse_json": false, "required_keys": null}),
        regex_texts.clone(),
    ));
    out.push((
        "regex_tagged_custom_pattern",
        json!({"kind": "regex_tagged", "pattern": r"\[(?P<name>\w+)\]\s*(?P<content>.*?)\s*\[/(?P=name)\]",
            "format_instruction": "Use [key]value[/key].", "required_keys": ["k"]}),
        vec![
            t("[k] 1 [/k] [v]two[/v]"),
            t("[k]{\"x\": [1]}[/k][k]2[/k]"),
            t("[v]x[/v]"),
            t("[é]ü[/é][k]\n[/k]"),
        ],
    ));
    out.push((
        "regex_tagged_empty_matches",
        json!({"kind": "regex_tagged", "pattern": "(?P<name>x?)(?P<content>)", "format_instruction": "", "required_keys": [""]}),
        vec![t("axbx"), t(""), t("xx")],
    ));
    out.push((
        "multi_tagged_same_marker",
        json!({"kind": "multi_tagged", "tags": [
            {"name": "a", "tag_begin": "|", "content_hint": "A", "tag_end": "|", "parse_json": false},
            {"name": "b", "tag_begin": "", "content_hint": "B", "tag_end": "", "parse_json": false}]}),
        vec![t("x|y|z"), t("|"), t("")],
    ));
    out
}

fn python() -> String {
    std::env::var("CHATPARSE_GRAMMAR_PYTHON").unwrap_or_else(|_| "python3".into())
}

#[test]
fn parsers_match_the_agentscope_package() {
    let parsers: Vec<Value> = corpus()
        .into_iter()
        .map(|(id, spec, texts)| {
            let (ours, cases) = ours(&spec, &texts);
            json!({"id": id, "spec": spec, "ours": ours, "cases": cases})
        })
        .collect();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("agentscope-check");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("corpus.json");
    std::fs::write(
        &path,
        chatparse::value::to_string_pretty(&json!({"parsers": parsers})),
    )
    .unwrap();
    let python = python();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/check_agentscope.py");
    let probe = Command::new(&python).arg(&script).arg("--version").output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        let msg = format!(
            "agentscope.parsers does not load with {python} (pip install loguru pydantic psutil requests; \
             pip install --no-deps agentscope==0.1.6; or set CHATPARSE_GRAMMAR_PYTHON)"
        );
        let require = std::env::var("CHATPARSE_REQUIRE_ENGINE").is_ok_and(|v| v == "1");
        assert!(!require, "{msg}");
        eprintln!("!!! AGENTSCOPE COMPARISON SKIPPED: {msg}");
        return;
    }
    let out = Command::new(&python)
        .arg(&script)
        .arg(&path)
        .output()
        .expect("run the comparison");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "scripts/check_agentscope.py {}:\n{stdout}\n{}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The routing rules themselves, on the documentation's example (`to_content` → `def`,
/// `to_memory` → the dict, `to_metadata` → None).
#[test]
fn documented_routing() {
    let parser = MarkdownJsonParser::dict(
        &json!({"thought": "what you thought", "speak": "what you speak"}),
        &[],
    )
    .keys_to_content(Keys::key("speak"))
    .keys_to_memory(Keys::list(&["thought", "speak"]));
    let example = json!({"thought": "abc", "speak": "def"});
    let m = example.as_object().unwrap();
    let r = parser.routing();
    assert_eq!(r.to_content(m, false), Ok(Some(json!("def"))));
    assert_eq!(r.to_memory(m, false), Ok(Some(example.clone())));
    assert_eq!(r.to_metadata(m, false), Ok(None));
}

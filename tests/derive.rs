//! `chatparse::derive` on the real chat templates: every family of the template round trips
//! (`tests/roundtrip/*.json`, and `tests/derive/*.json` for templates without a shipped schema)
//! gets a parser derived from its template alone, which must round-trip the standard
//! conversations at least as well as the shipped schema does (the original message, or the
//! family's stated loss). The format class found must be the one written in `CLASSES` from
//! reading each template. See `tests/roundtrip/README.md` for the families.

#[allow(dead_code)]
mod roundtrip_support;
mod support;

use std::path::PathBuf;

use chatparse::{Map, Value};
use roundtrip_support as rt;

/// Per template: the tool-call class and the reasoning class (written from reading the
/// templates), or `None` when derivation must refuse.
const CLASSES: &[(&str, Option<(&str, &str)>)] = &[
    (
        "ByteDance-Seed-OSS.jinja",
        Some(("tagged-parameters", "tags")),
    ),
    (
        "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
        Some(("json-array", "tags")),
    ),
    (
        "DeepSeek-V3.2.jinja",
        Some(("tagged-parameters", "prompt-opened tags")),
    ),
    ("GLM-4.6.jinja", Some(("tagged-parameters", "tags"))),
    ("HuggingFaceTB-SmolLM3-3B.jinja", Some(("none", "none"))),
    ("LFM2.5-8B-A1B.jinja", Some(("pythonic", "tags"))),
    (
        "MiniMax-M2.jinja",
        Some(("tagged-parameters", "prompt-opened tags")),
    ),
    (
        "Mistral-Small-3.2-24B-Instruct-2506.jinja",
        Some(("name-prefix", "none")),
    ),
    (
        "NVIDIA-Nemotron-Nano-v2.jinja",
        Some(("json-array", "prompt-opened tags")),
    ),
    (
        "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
        Some(("json-objects", "none")),
    ),
    (
        "Qwen-QwQ-32B.jinja",
        Some(("json-objects", "prompt-opened tags")),
    ),
    ("Qwen-Qwen3-0.6B.jinja", Some(("json-objects", "tags"))),
    ("Qwen3-Coder.jinja", Some(("tagged-parameters", "none"))),
    (
        "Qwen3.5-4B.jinja",
        Some(("tagged-parameters", "prompt-opened tags")),
    ),
    (
        "ServiceNow-AI-Apriel-1.5-15b-Thinker.jinja",
        Some(("json-array", "none")),
    ),
    (
        "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
        Some(("tag-json", "prompt-opened tags")),
    ),
    (
        "deepseek-ai-DeepSeek-V3.1.jinja",
        Some(("tag-json", "prompt-opened tags")),
    ),
    (
        "fireworks-ai-llama-3-firefunction-v2.jinja",
        Some(("json-array", "none")),
    ),
    ("gemma4.jinja", Some(("gemma-dialect", "none"))),
    ("glm_4_5.jinja", Some(("tagged-parameters", "tags"))),
    (
        "google-gemma-4-31B-it-interleaved.jinja",
        Some(("gemma-dialect", "tags")),
    ),
    (
        "ibm-granite-granite-3.3-2B-Instruct.jinja",
        Some(("none", "none")),
    ),
    (
        "llama-cpp-microsoft-Phi-4-mini-instruct.jinja",
        Some(("json-objects", "none")),
    ),
    (
        "meetkai-functionary-medium-v3.1.jinja",
        Some(("tag-json", "none")),
    ),
    (
        "meetkai-functionary-medium-v3.2.jinja",
        Some(("tag-json", "none")),
    ),
    (
        "meta-llama-Llama-3.2-3B-Instruct.jinja",
        Some(("json-objects", "none")),
    ),
    (
        "meta-llama-Llama-3.3-70B-Instruct.jinja",
        Some(("json-objects", "none")),
    ),
    (
        "mistralai-Mistral-Nemo-Instruct-2407.jinja",
        Some(("json-array", "none")),
    ),
    (
        "mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja",
        Some(("json-array", "none")),
    ),
    (
        "moonshotai-Kimi-K2-Thinking.jinja",
        Some(("special-token-ids", "tags")),
    ),
    ("openai-gpt-oss-120b.jinja", Some(("channel", "tags"))),
    (
        "tool_chat_template_hermes_2_pro.jinja",
        Some(("json-objects", "none")),
    ),
    ("unsloth-Apriel-1.5.jinja", Some(("json-array", "none"))),
    (
        "unsloth-MiniMax-M2.jinja",
        Some(("tagged-parameters", "prompt-opened tags")),
    ),
];

/// Families whose derived parser does not round-trip yet (the work left; see the README's
/// derivation table). The test fails when another family fails, and when one of these passes
/// (so the list stays true).
const KNOWN_GAPS: &[&str] = &[];

/// Templates whose derived classes differ from `CLASSES` yet (work left).
const KNOWN_CLASS_GAPS: &[&str] = &[];

fn families() -> Vec<rt::Family> {
    let mut out = Vec::new();
    for name in rt::family_names() {
        out.push(rt::Family::load(&name).expect("family file"));
    }
    let extra = rt::repo_root().join("tests/derive");
    for name in rt::family_names_in(&extra) {
        out.push(rt::Family::load_from(&extra.join(format!("{name}.json"))).expect("family file"));
    }
    out
}

/// The template variables a family renders with that derivation needs (besides tokens).
fn variables(family: &rt::Family) -> Map {
    let mut vars = family.variables.clone();
    if !family.bos_token.is_empty() {
        vars.insert("bos_token".into(), Value::String(family.bos_token.clone()));
    }
    vars
}

fn templates() -> Option<PathBuf> {
    let dir = rt::templates_dir();
    if dir.is_none() {
        eprintln!("!!! chat templates not found: derive tests skipped");
    }
    dir
}

#[test]
fn classes_are_the_expected_ones() {
    let Some(dir) = templates() else { return };
    let mut problems = Vec::new();
    let mut seen = 0;
    for (file, want) in CLASSES {
        let path = dir.join(file);
        let Ok(source) = std::fs::read_to_string(&path) else {
            problems.push(format!("{file}: missing"));
            continue;
        };
        seen += 1;
        let vars = families()
            .into_iter()
            .find(|f| f.template == *file)
            .map(|f| variables(&f))
            .unwrap_or_default();
        let got = chatparse::derive::derive_with(&source, &vars);
        if KNOWN_CLASS_GAPS.contains(file) {
            println!(
                "{file}: known gap: {:?}",
                got.as_ref()
                    .map(|d| (d.class.to_string(), d.reasoning.clone()))
            );
            continue;
        }
        match (got, want) {
            (Ok(d), Some((class, reasoning))) => {
                if d.class.to_string() != *class || d.reasoning != *reasoning {
                    problems.push(format!(
                        "{file}: derived ({}, {}), expected ({class}, {reasoning})",
                        d.class, d.reasoning
                    ));
                }
            }
            (Err(e), Some(_)) => problems.push(format!("{file}: refused: {e}")),
            (Ok(d), None) => problems.push(format!("{file}: derived {} but must refuse", d.class)),
            (Err(_), None) => {}
        }
    }
    assert!(seen > 0);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn derived_parsers_round_trip() {
    let Some(dir) = templates() else { return };
    let mut failures = String::new();
    let mut gaps = String::new();
    let mut stale = String::new();
    let mut summary = String::new();
    for family in families() {
        let known = KNOWN_GAPS.contains(&family.name.as_str());
        let sink = if known { &mut gaps } else { &mut failures };
        let source = std::fs::read_to_string(dir.join(&family.template)).unwrap();
        // The family's reasoning key names the field when the template reads none.
        let options = chatparse::derive::Options {
            variables: variables(&family),
            reasoning_key: family.reasoning_key.clone(),
        };
        let derived = match chatparse::derive::derive_opts(&source, &options) {
            Ok(d) => d,
            Err(e) => {
                sink.push_str(&format!("[{}] derive refused: {e}\n", family.name));
                continue;
            }
        };
        let spec = chatparse::runtime::Spec::from_json_str(&derived.spec.to_string())
            .unwrap_or_else(|e| panic!("{}: derived spec invalid: {e}", family.name));
        let parse = |tail: &str| spec.parse(tail).map_err(|e| e.to_string());
        let report = rt::run_family_with(&family, &dir, &parse);
        summary.push_str(&format!("{} [{}]\n", report.summary(), derived.class));
        let f = report.failure_text();
        if known && f.is_empty() {
            stale.push_str(&format!(
                "[{}] passes: remove it from KNOWN_GAPS\n",
                family.name
            ));
        }
        if !f.is_empty() {
            sink.push_str(&f);
            sink.push_str(&format!("    derived spec: {}\n", derived.spec));
        }
    }
    println!("{summary}\nknown gaps:\n{gaps}");
    assert!(failures.is_empty(), "{failures}");
    assert!(stale.is_empty(), "{stale}");
}

/// `chatparse derive T.jinja` with nothing else: every template derives (a variable the
/// template needs is set to "" and said so), and the parser reads the template's own renderings
/// of the probes back (`derive` refuses otherwise).
#[test]
fn every_template_derives_from_its_file_alone() {
    let Some(dir) = templates() else { return };
    let mut problems = Vec::new();
    for (file, _) in CLASSES {
        let source = std::fs::read_to_string(dir.join(file)).unwrap();
        if let Err(e) = chatparse::derive::derive(&source) {
            problems.push(format!("{file}: {e}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

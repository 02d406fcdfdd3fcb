//! The floor each shipped schema is measured against: one `memchr::memmem` pass per delimiter
//! its messages contain, plus `serde_json` on each JSON payload. Written by hand per schema from
//! its format; no regex, no message built. A parser cannot do less work and be correct.
//! The searchers are built once, as a hand-written parser would hold them.

use memchr::memmem::Finder;

/// One schema's delimiters, and where its JSON payloads sit: each `(open, close)` pair marks a
/// payload that starts at the first `{` or `[` after `open` and ends where `close` starts.
pub struct Floor {
    delimiters: Vec<Finder<'static>>,
    json: Vec<(Finder<'static>, Finder<'static>)>,
}

const THINK: &[&str] = &[
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<|im_end|>",
];
const XML_PARAMS: &[&str] = &[
    "</think>",
    "<tool_call>",
    "<function=",
    "<parameter=",
    "</parameter>",
    "</function>",
    "</tool_call>",
    "<|im_end|>",
];
const DEEPSEEK: &[&str] = &[
    "</think>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "<｜end▁of▁sentence｜>",
];

/// The floor of a shipped schema.
pub fn floor_of(schema: &str) -> Floor {
    let (delimiters, json): (&'static [&'static str], &'static [(&str, &str)]) = match schema {
        "apriel" => (
            &[
                "Here are my reasoning steps:",
                "[BEGIN FINAL RESPONSE]",
                "[END FINAL RESPONSE]",
                "<tool_calls>",
                "</tool_calls>",
                "<|end|>",
            ],
            &[("<tool_calls>", "</tool_calls>")],
        ),
        "cohere_command_r7b" => (
            &[
                "<|START_THINKING|>",
                "<|END_THINKING|>",
                "<|START_ACTION|>",
                "<|END_ACTION|>",
                "<|END_OF_TURN_TOKEN|>",
            ],
            &[("<|START_ACTION|>", "<|END_ACTION|>")],
        ),
        "deepseek_r1" => (DEEPSEEK, &[("```json", "```<｜tool▁call▁end｜>")]),
        "deepseek_v3_1" => (DEEPSEEK, &[("<｜tool▁sep｜>", "<｜tool▁call▁end｜>")]),
        "deepseek_v3_2" => (
            &[
                "</think>",
                "<｜DSML｜function_calls>",
                "<｜DSML｜invoke name=\"",
                "<｜DSML｜parameter name=\"",
                "</｜DSML｜parameter>",
                "</｜DSML｜invoke>",
                "</｜DSML｜function_calls>",
                "<｜end▁of▁sentence｜>",
            ],
            &[("string=\"false\">", "</｜DSML｜parameter>")],
        ),
        "ernie4_5" => (
            &["</think>", "<tool_call>", "</tool_call>", "</s>"],
            &[("<tool_call>", "</tool_call>")],
        ),
        "firefunction_v2" => (&["functools", "<|eot_id|>"], &[("functools", "<|eot_id|>")]),
        "functionary_v3_1" => (
            &["<function=", "</function>", "<|eom_id|>"],
            &[("<function=", "</function>")],
        ),
        "functionary_v3_2" => (&[">>>", "<|eot_id|>"], &[(">>>", "<|eot_id|>")]),
        "gemma4" => (
            &[
                "<|channel>",
                "<channel|>",
                "<|tool_call>",
                "<tool_call|>",
                "<|\"|>",
                "<|tool_response>",
            ],
            &[],
        ),
        "glm4_5" => (
            &[
                "<think>",
                "</think>",
                "<tool_call>",
                "<arg_key>",
                "</arg_key>",
                "<arg_value>",
                "</arg_value>",
                "</tool_call>",
                "<|observation|>",
            ],
            &[],
        ),
        "gpt_oss" => (
            &[
                "<|start|>",
                "<|channel|>",
                "<|message|>",
                "<|end|>",
                "to=functions.",
                "<|call|>",
            ],
            &[("to=functions.", "<|call|>")],
        ),
        "granite3_3" => (
            &[
                "<think>",
                "</think>",
                "<response>",
                "</response>",
                "<|end_of_text|>",
            ],
            &[],
        ),
        "hermes" | "qwen3" | "smollm3" => (THINK, &[("<tool_call>", "</tool_call>")]),
        "kimi_k2" => (
            &[
                "<think>",
                "</think>",
                "<|tool_calls_section_begin|>",
                "<|tool_call_begin|>",
                "<|tool_call_argument_begin|>",
                "<|tool_call_end|>",
                "<|tool_calls_section_end|>",
                "<|im_end|>",
            ],
            &[("<|tool_call_argument_begin|>", "<|tool_call_end|>")],
        ),
        "lfm2" => (
            &[
                "<think>",
                "</think>",
                "<|tool_call_start|>",
                "<|tool_call_end|>",
                "<|im_end|>",
            ],
            &[],
        ),
        "llama3_json" => (
            &["<|python_tag|>", "<|eom_id|>"],
            &[("<|python_tag|>", "<|eom_id|>")],
        ),
        "minimax_m2" => (
            &[
                "</think>",
                "<minimax:tool_call>",
                "<invoke name=\"",
                "<parameter name=\"",
                "</parameter>",
                "</invoke>",
                "</minimax:tool_call>",
                "[e~[",
            ],
            &[],
        ),
        "mistral_nemo" | "mistral_small_3_1" => {
            (&["[TOOL_CALLS]", "</s>"], &[("[TOOL_CALLS]", "</s>")])
        }
        "mistral_small" => (&["[TOOL_CALLS]", "[ARGS]", "</s>"], &[("[ARGS]", "</s>")]),
        "nemotron_nano_v2" => (
            &["</think>", "<TOOLCALL>", "</TOOLCALL>", "<SPECIAL_12>"],
            &[("<TOOLCALL>", "</TOOLCALL>")],
        ),
        "phi4_mini" => (
            &["<|tool_call|>", "functools[", "<|end|>"],
            &[("functools", "<|end|>")],
        ),
        "qwen3_5" | "qwen3_coder" => (XML_PARAMS, &[]),
        "seed_oss" => (
            &[
                "<seed:think>",
                "</seed:think>",
                "<seed:tool_call>",
                "<function=",
                "<parameter=",
                "</parameter>",
                "</function>",
                "</seed:tool_call>",
                "<seed:eos>",
            ],
            &[],
        ),
        other => panic!("no floor written for {other}: add one to benches/floor.rs"),
    };
    let finder = |d: &str| Finder::new(d.as_bytes()).into_owned();
    Floor {
        delimiters: delimiters.iter().map(|d| finder(d)).collect(),
        json: json.iter().map(|(o, c)| (finder(o), finder(c))).collect(),
    }
}

/// The floor's work on one message; returns something derived from every step so none of it
/// is optimised away.
pub fn run(text: &str, floor: &Floor) -> usize {
    let bytes = text.as_bytes();
    let mut sum = 0usize;
    for delimiter in &floor.delimiters {
        for at in delimiter.find_iter(bytes) {
            sum = sum.wrapping_add(at);
        }
    }
    for (open, close) in &floor.json {
        let mut from = 0;
        while let Some(at) = open.find(&bytes[from..]) {
            let after = from + at + open.needle().len();
            let Some(start) = memchr::memchr2(b'{', b'[', &bytes[after..]).map(|s| after + s)
            else {
                break;
            };
            let Some(end) = close.find(&bytes[start..]).map(|e| start + e) else {
                break;
            };
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(&text[start..end]) {
                sum = sum.wrapping_add(value.as_array().map_or(1, Vec::len));
            }
            from = end + close.needle().len();
        }
    }
    sum
}

//! The families' output formats, as grammar IR: where reasoning goes, what ends free text, and
//! how each call is written (its literal begin with the tool's name, its arguments, its end).
//!
//! Every format is read off the family's real chat template (the assistant turns it renders)
//! and its response schema; `tests/grammar.rs` checks each against those renderings.

use crate::Value;

use super::ir::{Node, Rules};
use super::values::{Dialect, ValueRules};
use super::{GrammarError, Options, Tool, ToolChoice};

/// A family's grammar and what the emitters need besides the rules.
#[derive(Debug, Clone)]
pub struct Built {
    /// The rules; `root` is the whole output, `calls-root` the calls part from its trigger on.
    pub rules: Rules,
    /// The literals that start the calls part.
    pub triggers: Vec<String>,
    /// The format's special tokens.
    pub special: Vec<String>,
    /// Whether `calls-root` exists (a lazy grammar can start at a trigger).
    pub has_calls_root: bool,
    /// Per allowed tool: the call's literal begin, its arguments' schema and dialect, its end.
    pub calls: Vec<CallShape>,
    /// The end-of-turn tokens (not part of the grammar).
    pub end_tokens: Vec<String>,
    /// An example of the calls part, for the format instruction, when there is no `calls-root`.
    pub example: Option<Node>,
    /// Whether the calls are a sequence of plain calls that each start with the trigger (no
    /// section around them): then a structural tag's triggered tags express them.
    pub tagged: bool,
}

/// One tool's call, for structural tags and format instructions.
#[derive(Debug, Clone)]
pub struct CallShape {
    /// The tool.
    pub name: String,
    /// The literal text before the arguments.
    pub begin: String,
    /// The literal text after the arguments.
    pub end: String,
    /// Whether the arguments are one JSON object (else the format's own parameter syntax).
    pub json_args: bool,
    /// Whether the call is exactly `begin`, the arguments, `end` (no id or other part between).
    pub plain: bool,
    /// The rule of the arguments.
    pub args_rule: String,
}

/// Reasoning at the start of the output.
#[derive(Clone, Copy)]
enum Reasoning {
    None,
    /// `open` text `close`, optional.
    Tagged(&'static str, &'static str),
    /// The prompt may have opened the block: an optional `open`, then text up to `close`; the
    /// whole optional.
    Opened(&'static str, &'static str),
}

/// How arguments are written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Args {
    /// One JSON object.
    Json,
    /// `<parameter=k>` … (see [`Xml`]).
    Xml(Xml),
    /// Python keyword arguments `k=v, …`.
    Pythonic,
    /// Gemma 4's `{k:v,…}`, keys sorted.
    Gemma,
}

/// XML-style parameters: `open(k)` value `close`, one after another (whitespace between);
/// string values raw, others JSON or Python literals.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Xml {
    /// `<parameter=k>\nV\n</parameter>` (Qwen3-Coder, Qwen3.5).
    QwenNl,
    /// `<parameter=k>V</parameter>` (Seed-OSS).
    Qwen,
    /// `<parameter name="k">V</parameter>` (MiniMax-M2).
    MiniMax,
    /// `<arg_key>k</arg_key>\n<arg_value>V</arg_value>` (GLM-4.5/4.6).
    Glm,
    /// `<｜DSML｜parameter name="k" string="true|false">V</｜DSML｜parameter>` (DeepSeek V3.2).
    Dsml,
}

/// A call: literal begin (with the name), the arguments, literal end.
struct CallFmt {
    begin: fn(&str) -> String,
    args: Args,
    end: &'static str,
    id: Id,
}

/// Where a call carries an id.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Id {
    /// Nowhere.
    None,
    /// Before the arguments: `[CALL_ID]` and nine letters or digits (optional), then `[ARGS]`
    /// (Mistral Small 3.2).
    MistralTokens,
    /// Before the arguments: the call's index, then `<|tool_call_argument_begin|>` (Kimi K2's
    /// `functions.NAME:0`).
    KimiIndex,
    /// After the arguments, in the call object: `, "id": "…"` (nine letters or digits,
    /// optional), then `}` (Mistral Nemo, Small 3.1).
    JsonField,
}

/// The calls part of a format.
struct CallsFmt {
    /// The literal every calls part starts with (a lazy grammar's trigger; plain text may not
    /// contain it).
    marker: &'static str,
    /// Literal before the first call (may be empty).
    open: &'static str,
    /// Literal between calls (whitespace around it is allowed).
    sep: &'static str,
    /// Literal after the last call.
    close: &'static str,
    call: CallFmt,
}

struct Family {
    reasoning: Reasoning,
    calls: CallsFmt,
    /// The end-of-turn tokens.
    end_tokens: &'static [&'static str],
    special: &'static [&'static str],
    /// Extra strings plain text may not contain.
    text_stop: &'static [&'static str],
    /// Whether text may follow the calls (Gemma 4 writes its calls, then its answer).
    text_after_calls: bool,
    /// Whether a JSON call may also be written arguments first (`{ "arguments": …, "name": …}`,
    /// Hermes 2 Pro's template).
    args_first: bool,
}

/// The shipped families that have a grammar.
pub fn family_names() -> Vec<&'static str> {
    FAMILIES.to_vec()
}

/// Whether `name` has a grammar.
pub fn has_family(name: &str) -> bool {
    FAMILIES.contains(&name)
}

const FAMILIES: &[&str] = &[
    "apriel",
    "cohere_command_r7b",
    "deepseek_r1",
    "deepseek_v3_1",
    "deepseek_v3_2",
    "ernie4_5",
    "firefunction_v2",
    "functionary_v3_1",
    "functionary_v3_2",
    "gemma4",
    "glm4_5",
    "gpt_oss",
    "granite3_3",
    "hermes",
    "kimi_k2",
    "lfm2",
    "llama3_json",
    "minimax_m2",
    "mistral_nemo",
    "mistral_small",
    "mistral_small_3_1",
    "nemotron_nano_v2",
    "phi4_mini",
    "qwen3",
    "qwen3_5",
    "qwen3_coder",
    "seed_oss",
    "smollm3",
];

fn json_name_args(name: &str) -> String {
    format!("{{\"name\": {}, \"arguments\": ", json_str(name))
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

fn hermes_like(reasoning: Reasoning, end: &'static [&'static str]) -> Family {
    Family {
        reasoning,
        calls: CallsFmt {
            marker: "<tool_call>",
            open: "",
            sep: "",
            close: "",
            call: CallFmt {
                begin: |n| format!("<tool_call>\n{}", json_name_args(n)),
                args: Args::Json,
                id: Id::None,
                end: "}\n</tool_call>",
            },
        },
        end_tokens: end,
        special: &["<tool_call>", "</tool_call>", "<think>", "</think>"],
        text_stop: &[],
        text_after_calls: false,
        args_first: false,
    }
}

fn list_of_json(
    open: &'static str,
    close: &'static str,
    end: &'static [&'static str],
    special: &'static [&'static str],
) -> Family {
    Family {
        reasoning: Reasoning::None,
        calls: CallsFmt {
            marker: open.trim_end_matches(['[', ' ']),
            open,
            sep: ",",
            close,
            call: CallFmt {
                begin: json_name_args,
                args: Args::Json,
                id: Id::None,
                end: "}",
            },
        },
        end_tokens: end,
        special,
        text_stop: &[],
        text_after_calls: false,
        args_first: false,
    }
}

fn family(name: &str) -> Option<Family> {
    const IM_END: &[&str] = &["<|im_end|>", "<|endoftext|>"];
    Some(match name {
        "hermes" => {
            let mut f = hermes_like(
                Reasoning::Tagged("<think>", "</think>"),
                &["<|im_end|>", "<|eot_id|>", "<|end_of_text|>"],
            );
            f.special = &["<tool_call>", "</tool_call>"];
            f.args_first = true;
            f
        }
        "qwen3" => hermes_like(Reasoning::Tagged("<think>", "</think>"), IM_END),
        "smollm3" => hermes_like(
            Reasoning::Tagged("<think>", "</think>"),
            &["<|im_end|>", "<|end_of_text|>"],
        ),
        "ernie4_5" => {
            let mut f = hermes_like(
                Reasoning::Opened("<think>", "</think>"),
                &["<|end_of_sentence|>", "</s>"],
            );
            f.text_stop = &["<response>", "</response>"];
            f
        }
        "qwen3_coder" | "qwen3_5" => Family {
            reasoning: Reasoning::Tagged("<think>", "</think>"),
            calls: CallsFmt {
                marker: "<tool_call>",
                open: "",
                sep: "",
                close: "",
                call: CallFmt {
                    begin: |n| format!("<tool_call>\n<function={n}>\n"),
                    args: Args::Xml(Xml::QwenNl),
                    id: Id::None,
                    end: "</function>\n</tool_call>",
                },
            },
            end_tokens: IM_END,
            special: &["<tool_call>", "</tool_call>", "<think>", "</think>"],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "seed_oss" => Family {
            reasoning: Reasoning::Tagged("<seed:think>", "</seed:think>"),
            calls: CallsFmt {
                marker: "<seed:tool_call>",
                open: "",
                sep: "",
                close: "",
                call: CallFmt {
                    begin: |n| format!("<seed:tool_call>\n<function={n}>\n"),
                    args: Args::Xml(Xml::Qwen),
                    id: Id::None,
                    end: "</function>\n</seed:tool_call>",
                },
            },
            end_tokens: &["<seed:eos>"],
            special: &[
                "<seed:think>",
                "</seed:think>",
                "<seed:tool_call>",
                "</seed:tool_call>",
            ],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "minimax_m2" => Family {
            reasoning: Reasoning::Opened("<think>", "</think>"),
            calls: CallsFmt {
                marker: "<minimax:tool_call>",
                open: "<minimax:tool_call>\n",
                sep: "",
                close: "</minimax:tool_call>",
                call: CallFmt {
                    begin: |n| format!("<invoke name=\"{n}\">\n"),
                    args: Args::Xml(Xml::MiniMax),
                    id: Id::None,
                    end: "</invoke>",
                },
            },
            end_tokens: &["[e~["],
            special: &["<minimax:tool_call>", "</minimax:tool_call>"],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "glm4_5" => Family {
            reasoning: Reasoning::Tagged("<think>", "</think>"),
            calls: CallsFmt {
                marker: "<tool_call>",
                open: "",
                sep: "",
                close: "",
                call: CallFmt {
                    begin: |n| format!("<tool_call>{n}\n"),
                    args: Args::Xml(Xml::Glm),
                    id: Id::None,
                    end: "</tool_call>",
                },
            },
            end_tokens: &["<|user|>", "<|observation|>", "<|endoftext|>"],
            special: &["<tool_call>", "</tool_call>", "<arg_key>", "<arg_value>"],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "deepseek_v3_2" => Family {
            reasoning: Reasoning::Opened("<think>", "</think>"),
            calls: CallsFmt {
                marker: "<｜DSML｜function_calls>",
                open: "<｜DSML｜function_calls>\n",
                sep: "",
                close: "</｜DSML｜function_calls>",
                call: CallFmt {
                    begin: |n| format!("<｜DSML｜invoke name=\"{n}\">\n"),
                    args: Args::Xml(Xml::Dsml),
                    id: Id::None,
                    end: "</｜DSML｜invoke>",
                },
            },
            end_tokens: &["<｜end▁of▁sentence｜>"],
            special: &["<｜DSML｜function_calls>"],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "deepseek_r1" => Family {
            reasoning: Reasoning::Opened("<think>", "</think>"),
            calls: CallsFmt {
                marker: "<｜tool▁calls▁begin｜>",
                open: "<｜tool▁calls▁begin｜>",
                sep: "",
                close: "<｜tool▁calls▁end｜>",
                call: CallFmt {
                    begin: |n| format!("<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n"),
                    args: Args::Json,
                    id: Id::None,
                    end: "\n```<｜tool▁call▁end｜>",
                },
            },
            end_tokens: &["<｜end▁of▁sentence｜>"],
            special: &[
                "<｜tool▁calls▁begin｜>",
                "<｜tool▁call▁begin｜>",
                "<｜tool▁sep｜>",
                "<｜tool▁call▁end｜>",
                "<｜tool▁calls▁end｜>",
            ],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "deepseek_v3_1" => Family {
            reasoning: Reasoning::Opened("<think>", "</think>"),
            calls: CallsFmt {
                marker: "<｜tool▁calls▁begin｜>",
                open: "<｜tool▁calls▁begin｜>",
                sep: "",
                close: "<｜tool▁calls▁end｜>",
                call: CallFmt {
                    begin: |n| format!("<｜tool▁call▁begin｜>{n}<｜tool▁sep｜>"),
                    args: Args::Json,
                    id: Id::None,
                    end: "<｜tool▁call▁end｜>",
                },
            },
            end_tokens: &["<｜end▁of▁sentence｜>"],
            special: &[
                "<｜tool▁calls▁begin｜>",
                "<｜tool▁call▁begin｜>",
                "<｜tool▁sep｜>",
                "<｜tool▁call▁end｜>",
                "<｜tool▁calls▁end｜>",
            ],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "kimi_k2" => Family {
            reasoning: Reasoning::Tagged("<think>", "</think>"),
            calls: CallsFmt {
                marker: "<|tool_calls_section_begin|>",
                open: "<|tool_calls_section_begin|>",
                sep: "",
                close: "<|tool_calls_section_end|>",
                call: CallFmt {
                    begin: |n| format!("<|tool_call_begin|>functions.{n}:"),
                    args: Args::Json,
                    id: Id::KimiIndex,
                    end: "<|tool_call_end|>",
                },
            },
            end_tokens: &["<|im_end|>", "[EOS]"],
            special: &[
                "<|tool_calls_section_begin|>",
                "<|tool_call_begin|>",
                "<|tool_call_argument_begin|>",
                "<|tool_call_end|>",
                "<|tool_calls_section_end|>",
            ],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "lfm2" => Family {
            reasoning: Reasoning::Tagged("<think>", "</think>"),
            calls: CallsFmt {
                marker: "<|tool_call_start|>",
                open: "<|tool_call_start|>[",
                sep: ",",
                close: "]<|tool_call_end|>",
                call: CallFmt {
                    begin: |n| format!("{n}("),
                    args: Args::Pythonic,
                    id: Id::None,
                    end: ")",
                },
            },
            end_tokens: IM_END,
            special: &["<|tool_call_start|>", "<|tool_call_end|>"],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "gemma4" => Family {
            reasoning: Reasoning::Tagged("<|channel>thought", "<channel|>"),
            calls: CallsFmt {
                marker: "<|tool_call>",
                open: "",
                sep: "",
                close: "",
                call: CallFmt {
                    begin: |n| format!("<|tool_call>call:{n}"),
                    args: Args::Gemma,
                    id: Id::None,
                    end: "<tool_call|>",
                },
            },
            end_tokens: &["<turn|>", "<|tool_response>", "<eos>"],
            special: &[
                "<|tool_call>",
                "<tool_call|>",
                "<|\"|>",
                "<|channel>",
                "<channel|>",
            ],
            text_stop: &[],
            text_after_calls: true,
            args_first: false,
        },
        "phi4_mini" => Family {
            reasoning: Reasoning::None,
            calls: CallsFmt {
                marker: "<|tool_call|>",
                open: "",
                sep: "",
                close: "",
                call: CallFmt {
                    begin: |n| format!("<|tool_call|>{}", json_name_args(n)),
                    args: Args::Json,
                    id: Id::None,
                    end: "}<|/tool_call|>",
                },
            },
            end_tokens: &["<|end|>", "<|endoftext|>"],
            special: &["<|tool_call|>", "<|/tool_call|>"],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "functionary_v3_1" => Family {
            reasoning: Reasoning::None,
            calls: CallsFmt {
                marker: "<function=",
                open: "",
                sep: "",
                close: "",
                call: CallFmt {
                    begin: |n| format!("<function={n}>"),
                    args: Args::Json,
                    id: Id::None,
                    end: "</function>",
                },
            },
            end_tokens: &["<|eom_id|>", "<|eot_id|>"],
            special: &["<|python_tag|>"],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        "firefunction_v2" => list_of_json("functools[", "]", &["<|eot_id|>"], &[]),
        "nemotron_nano_v2" => {
            let mut f = list_of_json("<TOOLCALL>[", "]</TOOLCALL>", &["<SPECIAL_12>"], &[]);
            f.reasoning = Reasoning::Tagged("<think>", "</think>");
            f.special = &["<TOOLCALL>", "</TOOLCALL>", "<think>", "</think>"];
            f
        }
        "apriel" => {
            let mut f = list_of_json("<tool_calls>[", "]</tool_calls>", &["<|end|>"], &[]);
            f.special = &["<tool_calls>", "</tool_calls>"];
            f
        }
        "granite3_3" => {
            let mut f = list_of_json("<|tool_call|>[", "]", &["<|end_of_text|>"], &[]);
            f.reasoning = Reasoning::Tagged("<think>", "</think>");
            f.special = &["<|tool_call|>"];
            f
        }
        "mistral_nemo" | "mistral_small_3_1" => {
            let open = if name == "mistral_nemo" {
                "[TOOL_CALLS]["
            } else {
                "[TOOL_CALLS] ["
            };
            let mut f = list_of_json(open, "]", &["</s>"], &["[TOOL_CALLS]"]);
            // `, "id": "…"` (nine letters or digits) after the arguments.
            f.calls.call.end = "";
            f.calls.call.id = Id::JsonField;
            f.calls.marker = "[TOOL_CALLS]";
            f
        }
        "mistral_small" => Family {
            reasoning: Reasoning::None,
            calls: CallsFmt {
                marker: "[TOOL_CALLS]",
                open: "",
                sep: "",
                close: "",
                call: CallFmt {
                    begin: |n| format!("[TOOL_CALLS]{n}"),
                    args: Args::Json,
                    id: Id::MistralTokens,
                    end: "",
                },
            },
            end_tokens: &["</s>"],
            special: &["[TOOL_CALLS]", "[CALL_ID]", "[ARGS]"],
            text_stop: &[],
            text_after_calls: false,
            args_first: false,
        },
        _ => return None,
    })
}

/// Builds the grammar of a family.
pub fn build(name: &str, tools: &[Tool], options: &Options) -> Result<Built, GrammarError> {
    let allowed: Vec<&Tool> = match &options.tool_choice {
        ToolChoice::Named(n) => tools.iter().filter(|t| &t.name == n).collect(),
        _ => tools.iter().collect(),
    };
    let calls_allowed = options.tool_choice != ToolChoice::None && !allowed.is_empty();
    let required = matches!(
        options.tool_choice,
        ToolChoice::Required | ToolChoice::Named(_)
    );
    match name {
        "gpt_oss" => return Ok(gpt_oss(&allowed, calls_allowed, required)),
        "cohere_command_r7b" => {
            return Ok(cohere(&allowed, calls_allowed, required, options.parallel))
        }
        "functionary_v3_2" => {
            return Ok(functionary_v3_2(
                &allowed,
                calls_allowed,
                required,
                options.parallel,
            ))
        }
        "llama3_json" => return Ok(llama3_json(&allowed, calls_allowed, required)),
        _ => {}
    }
    let Some(fam) = family(name) else {
        return Err(GrammarError(format!(
            "no grammar for family {name:?}; families: {}",
            FAMILIES.join(", ")
        )));
    };
    let mut rules = Rules::default();
    let mut shapes = Vec::new();
    // Each call, as alternatives over the tools.
    let mut call_alts = Vec::new();
    for t in &allowed {
        let (node, shape) = call_node(&mut rules, &fam.calls, t);
        call_alts.push(node);
        shapes.push(shape);
    }
    if fam.args_first {
        for shape in shapes.clone() {
            let end = format!(", \"name\": {}}}\n</tool_call>", json_str(&shape.name));
            call_alts.push(Node::seq([
                Node::lit("<tool_call>\n{ \"arguments\": "),
                Node::rule(shape.args_rule.clone()),
                Node::lit(end.clone()),
            ]));
            shapes.push(CallShape {
                begin: "<tool_call>\n{ \"arguments\": ".into(),
                end,
                ..shape
            });
        }
    }
    let calls = &fam.calls;
    let trigger = calls.marker.to_owned();
    let mut stop: Vec<String> = vec![trigger.clone()];
    match fam.reasoning {
        Reasoning::Tagged(o, c) | Reasoning::Opened(o, c) => {
            stop.push(o.to_owned());
            stop.push(c.to_owned());
        }
        Reasoning::None => {}
    }
    stop.extend(fam.end_tokens.iter().map(|s| s.to_string()));
    stop.extend(fam.text_stop.iter().map(|s| s.to_string()));
    stop.sort();
    stop.dedup();

    // The reasoning part.
    let reasoning = match fam.reasoning {
        Reasoning::None => Node::lit(""),
        Reasoning::Tagged(o, c) => Node::opt(Node::seq([
            Node::WsLit(o.to_owned()),
            Node::TextThen {
                stop: vec![c.to_owned()],
                end: c.to_owned(),
            },
        ])),
        Reasoning::Opened(o, c) => Node::opt(Node::seq([
            Node::opt(Node::WsLit(o.to_owned())),
            Node::TextThen {
                stop: vec![c.to_owned()],
                end: c.to_owned(),
            },
        ])),
    };
    rules.define("root", Node::lit(""));
    rules.define("reasoning", reasoning);
    let ws = ws(&mut rules);
    // The calls part, then the same without the trigger (the text before it ends with it).
    rules.define("call", Node::alt(call_alts.clone()));
    let more = if options.parallel {
        Node::star(Node::seq([
            ws.clone(),
            Node::lit(calls.sep),
            ws.clone(),
            Node::rule("call"),
        ]))
    } else {
        Node::lit("")
    };
    let first = if calls.open.is_empty() {
        Node::alt(call_alts)
    } else {
        Node::seq([Node::lit(calls.open), ws.clone(), Node::rule("call")])
    };
    let tail = if fam.text_after_calls {
        Node::Text { stop: stop.clone() }
    } else {
        ws.clone()
    };
    let whole = Node::seq([first, more, ws.clone(), Node::lit(calls.close), tail]);
    let after_trigger = strip_prefix(&whole, &trigger);
    rules.define("calls-after-trigger", after_trigger);
    let content_only = Node::Text { stop: stop.clone() };
    let with_calls = Node::seq([
        Node::TextThen {
            stop: stop.clone(),
            end: trigger.clone(),
        },
        Node::rule("calls-after-trigger"),
    ]);
    let body = if !calls_allowed {
        content_only
    } else if required {
        with_calls
    } else {
        Node::alt([with_calls, content_only])
    };
    rules.define("root", Node::seq([Node::rule("reasoning"), body]));
    let has_calls_root = calls_allowed && !trigger.is_empty();
    if has_calls_root {
        rules.define(
            "calls-root",
            Node::seq([
                Node::lit(trigger.clone()),
                Node::rule("calls-after-trigger"),
            ]),
        );
    }
    let mut special: Vec<String> = fam.special.iter().map(|s| s.to_string()).collect();
    if let Reasoning::Tagged(o, c) | Reasoning::Opened(o, c) = fam.reasoning {
        for s in [o, c] {
            if !special.iter().any(|x| x == s) {
                special.push(s.to_owned());
            }
        }
    }
    let tagged = calls.open.is_empty()
        && calls.close.is_empty()
        && calls.sep.is_empty()
        && shapes
            .iter()
            .all(|c| c.plain && c.begin.starts_with(trigger.as_str()));
    Ok(Built {
        example: None,
        tagged,
        rules,
        triggers: if has_calls_root {
            vec![trigger]
        } else {
            Vec::new()
        },
        special,
        has_calls_root,
        calls: shapes,
        end_tokens: fam.end_tokens.iter().map(|s| s.to_string()).collect(),
    })
}

/// `n` without the literal `prefix` at its start (through sequences and alternatives).
fn strip_prefix(n: &Node, prefix: &str) -> Node {
    if prefix.is_empty() {
        return n.clone();
    }
    match n {
        Node::Lit(s) => Node::lit(s.strip_prefix(prefix).unwrap_or(s)),
        Node::Seq(items) => {
            let mut items = items.clone();
            if let Some(first) = items.first_mut() {
                *first = strip_prefix(first, prefix);
            }
            Node::seq(items)
        }
        Node::Alt(items) => Node::alt(items.iter().map(|i| strip_prefix(i, prefix))),
        other => other.clone(),
    }
}

fn ws(rules: &mut Rules) -> Node {
    if !rules.has("ws") {
        rules.define(
            "ws",
            Node::star(Node::class(&[(' ', ' '), ('\t', '\t'), ('\n', '\n')])),
        );
    }
    Node::rule("ws")
}

/// `base`, or `base-2`, `base-3`, … when taken (tool names that differ only in punctuation);
/// reserved at once.
fn unique(rules: &mut Rules, base: &str) -> String {
    let mut name = base.to_owned();
    let mut n = 1;
    while rules.has(&name) {
        n += 1;
        name = format!("{base}-{n}");
    }
    rules.define(name.clone(), Node::lit(""));
    name
}

fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// One tool's call: `begin` args `end` as a node (inline sequence), and its shape.
fn call_node(rules: &mut Rules, calls: &CallsFmt, tool: &Tool) -> (Node, CallShape) {
    let begin = (calls.call.begin)(&tool.name);
    let args_rule = unique(rules, &format!("args-{}", sanitize(&tool.name)));
    let args = args_node(rules, calls.call.args, tool, &args_rule);
    rules.define(args_rule.clone(), args);
    let (pre_args, mid, end) = match calls.call.id {
        Id::None => (
            Node::lit(""),
            Node::lit(calls.call.end),
            calls.call.end.to_owned(),
        ),
        Id::MistralTokens => (
            Node::seq([
                Node::opt(Node::seq([Node::lit("[CALL_ID]"), mistral_id(rules)])),
                Node::lit("[ARGS]"),
            ]),
            Node::lit(calls.call.end),
            calls.call.end.to_owned(),
        ),
        Id::KimiIndex => (
            Node::seq([
                Node::class(&[('0', '9')]),
                Node::star(Node::class(&[('0', '9')])),
                Node::lit("<|tool_call_argument_begin|>"),
            ]),
            Node::lit(calls.call.end),
            calls.call.end.to_owned(),
        ),
        Id::JsonField => (
            Node::lit(""),
            Node::seq([
                Node::opt(Node::seq([
                    Node::lit(", \"id\": \""),
                    mistral_id(rules),
                    Node::lit("\""),
                ])),
                Node::lit("}"),
            ]),
            "}".to_owned(),
        ),
    };
    let json_args = calls.call.args == Args::Json;
    let plain = calls.call.id == Id::None;
    let node = Node::seq([
        Node::lit(begin.clone()),
        pre_args,
        Node::rule(args_rule.clone()),
        mid,
    ]);
    (
        node,
        CallShape {
            name: tool.name.clone(),
            begin,
            end,
            json_args,
            plain,
            args_rule,
        },
    )
}

fn mistral_id(rules: &mut Rules) -> Node {
    if !rules.has("call-id") {
        let c = Node::class(&[('a', 'z'), ('A', 'Z'), ('0', '9')]);
        rules.define("call-id", Node::seq(vec![c; 9]));
    }
    Node::rule("call-id")
}

/// The arguments of `tool` in the format's syntax.
fn args_node(rules: &mut Rules, args: Args, tool: &Tool, base: &str) -> Node {
    let params = &tool.parameters;
    match args {
        Args::Json => {
            let mut v = ValueRules::new(rules, Dialect::Json, params);
            v.value(params, base)
        }
        Args::Gemma => {
            let sorted = sort_keys(params);
            let mut v = ValueRules::new(rules, Dialect::Gemma, &sorted);
            v.value(&sorted, base)
        }
        Args::Pythonic => {
            let ws = ws(rules);
            let sep = Node::seq([Node::lit(","), ws.clone()]);
            let mut v = ValueRules::new(rules, Dialect::Python, params);
            v.members(params, base, sep, |v, k, s| {
                let py = v.value(s, &format!("{base}-{k}"));
                let json = {
                    let mut j = ValueRules::new(v.rules, Dialect::Json, params);
                    j.value(s, &format!("{base}-{k}-json"))
                };
                Node::seq([Node::lit(format!("{k}=")), Node::alt([py, json])])
            })
        }
        Args::Xml(style) => {
            let ws = ws(rules);
            let mut v = ValueRules::new(rules, Dialect::Json, params);
            let body = v.members(params, base, ws.clone(), |v, k, s| {
                xml_member(v, style, k, s, params, base)
            });
            Node::seq([body, ws])
        }
    }
}

fn is_string_schema(s: &Value) -> bool {
    match s.get("type") {
        Some(Value::String(t)) => t == "string",
        _ => false,
    }
}

fn xml_member(
    v: &mut ValueRules<'_>,
    style: Xml,
    key: &str,
    schema: &Value,
    params: &Value,
    base: &str,
) -> Node {
    let string = is_string_schema(schema);
    let (open, close) = match style {
        Xml::QwenNl => (format!("<parameter={key}>\n"), "\n</parameter>".to_owned()),
        Xml::Qwen => (format!("<parameter={key}>"), "</parameter>".to_owned()),
        Xml::MiniMax => (
            format!("<parameter name=\"{key}\">"),
            "</parameter>".to_owned(),
        ),
        Xml::Glm => (
            format!("<arg_key>{key}</arg_key>\n<arg_value>"),
            "</arg_value>".to_owned(),
        ),
        Xml::Dsml => (
            format!(
                "<｜DSML｜parameter name=\"{key}\" string=\"{}\">",
                if string { "true" } else { "false" }
            ),
            "</｜DSML｜parameter>".to_owned(),
        ),
    };
    let value = if string {
        match schema.get("enum").and_then(Value::as_array) {
            Some(options) => Node::seq([
                Node::alt(
                    options
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|s| Node::lit(s.to_owned())),
                ),
                Node::lit(close.clone()),
            ]),
            None => Node::TextThen {
                stop: vec![close.clone()],
                end: close.clone(),
            },
        }
    } else {
        let json = v.value(schema, &format!("{base}-{key}"));
        let py = {
            let mut p = ValueRules::new(v.rules, Dialect::Python, params);
            p.value(schema, &format!("{base}-{key}-py"))
        };
        let ws = Node::rule("ws");
        Node::seq([
            ws.clone(),
            Node::alt([json, py]),
            ws,
            Node::lit(close.trim_start_matches('\n').to_owned()),
        ])
    };
    Node::seq([Node::lit(open), value])
}

/// A schema with every `properties` map in key order (Gemma writes keys sorted).
fn sort_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = crate::Map::new();
            for (k, x) in m {
                if k == "properties" {
                    if let Value::Object(p) = x {
                        let mut keys: Vec<&String> = p.keys().collect();
                        keys.sort();
                        let mut sorted = crate::Map::new();
                        for key in keys {
                            sorted.insert(key.clone(), sort_keys(&p[key]));
                        }
                        out.insert(k.clone(), Value::Object(sorted));
                        continue;
                    }
                }
                out.insert(k.clone(), sort_keys(x));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

fn json_args_rule(rules: &mut Rules, tool: &Tool) -> String {
    let name = unique(rules, &format!("args-{}", sanitize(&tool.name)));
    let node = args_node(rules, Args::Json, tool, &name);
    rules.define(name.clone(), node);
    name
}

fn simple_shape(tool: &Tool, begin: String, end: &str, args_rule: String) -> CallShape {
    CallShape {
        name: tool.name.clone(),
        begin,
        end: end.to_owned(),
        json_args: true,
        plain: true,
        args_rule,
    }
}

/// gpt-oss (harmony): messages on channels; an analysis message (reasoning), then a final
/// message, or one call (`to=functions.NAME`, its JSON arguments; the turn ends at `<|call|>`).
fn gpt_oss(allowed: &[&Tool], calls_allowed: bool, required: bool) -> Built {
    let mut rules = Rules::default();
    let text = |end: &str| Node::TextThen {
        stop: vec![end.to_owned()],
        end: end.to_owned(),
    };
    let stops: Vec<String> = [
        "<|end|>",
        "<|start|>",
        "<|channel|>",
        "<|message|>",
        "<|return|>",
        "<|call|>",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // A message that ends with <|end|> and another begins: analysis (reasoning) or a commentary
    // preamble.
    let earlier = Node::seq([
        Node::lit("<|channel|>"),
        Node::alt([Node::lit("analysis"), Node::lit("commentary")]),
        Node::lit("<|message|>"),
        text("<|end|>"),
        Node::lit("<|start|>assistant"),
    ]);
    let final_msg = Node::seq([
        Node::lit("<|channel|>final<|message|>"),
        Node::Text { stop: stops },
    ]);
    let mut shapes = Vec::new();
    let mut alts = Vec::new();
    for t in allowed {
        let args = json_args_rule(&mut rules, t);
        let a = Node::seq([
            Node::lit(format!(" to=functions.{}<|channel|>commentary", t.name)),
            Node::opt(Node::alt([
                Node::lit(" json"),
                Node::lit(" <|constrain|>json"),
            ])),
            Node::lit("<|message|>"),
            Node::rule(args.clone()),
        ]);
        let b = Node::seq([
            Node::lit(format!("<|channel|>commentary to=functions.{}", t.name)),
            Node::opt(Node::alt([
                Node::lit(" json"),
                Node::lit(" <|constrain|>json"),
            ])),
            Node::lit("<|message|>"),
            Node::rule(args.clone()),
        ]);
        alts.push(Node::alt([a, b]));
        shapes.push(simple_shape(
            t,
            format!(
                " to=functions.{}<|channel|>commentary json<|message|>",
                t.name
            ),
            "",
            args,
        ));
    }
    let example = alts.first().cloned();
    let ending = if !calls_allowed {
        final_msg
    } else if required {
        Node::alt(alts)
    } else {
        let mut a = alts;
        a.push(final_msg);
        Node::alt(a)
    };
    rules.define("root", Node::seq([Node::star(earlier), ending]));

    Built {
        example,
        tagged: false,
        rules,
        triggers: Vec::new(),
        special: [
            "<|start|>",
            "<|end|>",
            "<|channel|>",
            "<|message|>",
            "<|constrain|>",
            "<|call|>",
            "<|return|>",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        has_calls_root: false,
        calls: shapes,
        end_tokens: vec!["<|return|>".into(), "<|call|>".into()],
    }
}

/// Command R7B: `<|START_THINKING|>R<|END_THINKING|><|START_ACTION|>[{…}, …]<|END_ACTION|>`, or
/// `<|START_RESPONSE|>C<|END_RESPONSE|>`.
fn cohere(allowed: &[&Tool], calls_allowed: bool, required: bool, parallel: bool) -> Built {
    let mut rules = Rules::default();
    let ws = ws(&mut rules);
    let mut shapes = Vec::new();
    let mut alts = Vec::new();
    for t in allowed {
        let args = json_args_rule(&mut rules, t);
        let begin_tail = format!("\"tool_name\": {}, \"parameters\": ", json_str(&t.name));
        alts.push(Node::seq([
            Node::lit("{\"tool_call_id\": \""),
            Node::class(&[('0', '9')]),
            Node::star(Node::class(&[('0', '9')])),
            Node::lit(format!("\", {begin_tail}")),
            Node::rule(args.clone()),
            Node::lit("}"),
        ]));
        shapes.push(simple_shape(
            t,
            format!("{{\"tool_call_id\": \"0\", {begin_tail}"),
            "}",
            args,
        ));
    }
    rules.define("call", Node::alt(alts));
    let more = if parallel {
        Node::star(Node::seq([
            ws.clone(),
            Node::lit(","),
            ws.clone(),
            Node::rule("call"),
        ]))
    } else {
        Node::lit("")
    };
    let example = Some(Node::seq([
        Node::lit("<|START_ACTION|>[\n    "),
        Node::rule("call"),
        Node::lit("\n]<|END_ACTION|>"),
    ]));
    let action = Node::seq([
        Node::opt(Node::seq([
            Node::lit("<|START_THINKING|>"),
            Node::TextThen {
                stop: vec!["<|END_THINKING|>".into()],
                end: "<|END_THINKING|>".into(),
            },
        ])),
        Node::lit("<|START_ACTION|>["),
        ws.clone(),
        Node::rule("call"),
        more,
        ws.clone(),
        Node::lit("]<|END_ACTION|>"),
    ]);
    let response = Node::seq([
        Node::opt(Node::seq([
            Node::lit("<|START_THINKING|>"),
            Node::TextThen {
                stop: vec!["<|END_THINKING|>".into()],
                end: "<|END_THINKING|>".into(),
            },
        ])),
        Node::lit("<|START_RESPONSE|>"),
        Node::TextThen {
            stop: vec!["<|END_RESPONSE|>".into()],
            end: "<|END_RESPONSE|>".into(),
        },
    ]);
    let root = if !calls_allowed {
        response
    } else if required {
        action
    } else {
        Node::alt([action, response])
    };
    rules.define("root", root);
    Built {
        example,
        tagged: false,
        rules,
        triggers: Vec::new(),
        special: [
            "<|START_THINKING|>",
            "<|END_THINKING|>",
            "<|START_ACTION|>",
            "<|END_ACTION|>",
            "<|START_RESPONSE|>",
            "<|END_RESPONSE|>",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        has_calls_root: false,
        calls: shapes,
        end_tokens: vec!["<|END_OF_TURN_TOKEN|>".into()],
    }
}

/// Functionary v3.2: the prompt ends with `>>>`; the output is `all\n` and text, or a call
/// `NAME\n{…}`; more messages follow after `>>>`.
fn functionary_v3_2(
    allowed: &[&Tool],
    calls_allowed: bool,
    required: bool,
    parallel: bool,
) -> Built {
    let mut rules = Rules::default();
    let mut shapes = Vec::new();
    let mut alts = Vec::new();
    for t in allowed {
        let args = json_args_rule(&mut rules, t);
        alts.push(Node::seq([
            Node::lit(format!("{}\n", t.name)),
            Node::rule(args.clone()),
        ]));
        shapes.push(simple_shape(t, format!(">>>{}\n", t.name), "", args));
    }
    let stop: Vec<String> = vec![">>>".into(), "<|eot_id|>".into()];
    rules.define("call", Node::alt(alts));
    let more = if parallel {
        Node::star(Node::seq([Node::lit(">>>"), Node::rule("call")]))
    } else {
        Node::lit("")
    };
    let calls = Node::seq([Node::rule("call"), more]);
    let example = Some(Node::rule("call"));
    let text_only = Node::seq([Node::lit("all\n"), Node::Text { stop: stop.clone() }]);
    let text_then_calls = Node::seq([
        Node::lit("all\n"),
        Node::TextThen {
            stop: stop.clone(),
            end: ">>>".into(),
        },
        calls.clone(),
    ]);
    let root = if !calls_allowed {
        text_only
    } else if required {
        Node::alt([calls, text_then_calls])
    } else {
        Node::alt([calls, text_then_calls, text_only])
    };
    rules.define("root", root);
    Built {
        example,
        tagged: false,
        rules,
        triggers: Vec::new(),
        special: vec![">>>".into()],
        has_calls_root: false,
        calls: shapes,
        end_tokens: vec!["<|eot_id|>".into()],
    }
}

/// Llama 3.x JSON tools: either text, or one call as a bare JSON object
/// `{"name": N, "parameters": {…}}` (optionally after `<|python_tag|>`).
fn llama3_json(allowed: &[&Tool], calls_allowed: bool, required: bool) -> Built {
    let mut rules = Rules::default();
    let ws = ws(&mut rules);
    let mut shapes = Vec::new();
    let mut alts = Vec::new();
    for t in allowed {
        let args = json_args_rule(&mut rules, t);
        let begin = format!("{{\"name\": {}, \"parameters\": ", json_str(&t.name));
        alts.push(Node::seq([
            Node::lit(begin.clone()),
            Node::rule(args.clone()),
            Node::lit("}"),
        ]));
        shapes.push(simple_shape(t, begin, "}", args));
    }
    let stop: Vec<String> = vec![
        "<|python_tag|>".into(),
        "<|eom_id|>".into(),
        "<|eot_id|>".into(),
    ];
    // Text that does not start with `{` (nor whitespace then `{`): a call is a JSON object alone.
    let text = Node::alt([
        Node::lit(""),
        Node::seq([
            Node::star(Node::class(&[(' ', ' '), ('\t', '\t'), ('\n', '\n')])),
            Node::not_class(&[
                (' ', ' '),
                ('\t', '\t'),
                ('\n', '\n'),
                ('{', '{'),
                ('<', '<'),
            ]),
            Node::Text { stop: stop.clone() },
        ]),
    ]);
    rules.define("call", Node::alt(alts));
    let example = Some(Node::rule("call"));
    let call = Node::seq([
        ws.clone(),
        Node::opt(Node::lit("<|python_tag|>")),
        Node::rule("call"),
        ws,
    ]);
    let root = if !calls_allowed {
        text
    } else if required {
        call
    } else {
        Node::alt([call, text])
    };
    rules.define("root", root);
    Built {
        example,
        tagged: false,
        rules,
        triggers: Vec::new(),
        special: vec!["<|python_tag|>".into()],
        has_calls_root: false,
        calls: shapes,
        end_tokens: vec!["<|eom_id|>".into(), "<|eot_id|>".into()],
    }
}

/// The format instruction of a family (see [`GrammarSpec::format_instruction`]).
///
/// [`GrammarSpec::format_instruction`]: super::GrammarSpec::format_instruction
pub fn instruction(family: &str, tools: &[Tool], options: &Options) -> String {
    let built = match build(family, tools, options) {
        Ok(b) => b,
        Err(e) => return e.to_string(),
    };
    let mut s = String::new();
    let reasoning = match family_reasoning(family) {
        Some((o, c)) => format!("You may first think inside {o}…{c}. "),
        None => String::new(),
    };
    s.push_str(&reasoning);
    match &options.tool_choice {
        ToolChoice::None => {
            s.push_str("Answer in plain text; do not call any tool.");
            return s;
        }
        ToolChoice::Auto => s.push_str("Answer in plain text, or call tools. "),
        ToolChoice::Required => s.push_str("You must call at least one tool. "),
        ToolChoice::Named(n) => s.push_str(&format!("You must call the tool {n}. ")),
    }
    if !options.parallel {
        s.push_str("Make at most one call. ");
    }
    let root = if built.rules.has("calls-root") {
        Some(Node::rule("calls-root"))
    } else {
        built.example.clone()
    };
    if let Some(root) = root {
        let mut example = String::new();
        sample(&built.rules, &root, &mut example, 0);
        s.push_str(&format!(
            "Write tool calls exactly in this form (one call shown):\n{}\n",
            example.trim_start_matches('\n').trim_end()
        ));
    }
    let names: Vec<&str> = tools
        .iter()
        .filter(|t| match &options.tool_choice {
            ToolChoice::Named(n) => &t.name == n,
            _ => true,
        })
        .map(|t| t.name.as_str())
        .collect();
    if !names.is_empty() {
        s.push_str(&format!(
            "Tools: {}. Arguments must follow each tool's JSON schema; the output ends after the \
             calls.",
            names.join(", ")
        ));
    }
    s.trim_end().to_owned()
}

fn family_reasoning(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "gpt_oss" => Some(("<|channel|>analysis<|message|>", "<|end|>")),
        "cohere_command_r7b" => Some(("<|START_THINKING|>", "<|END_THINKING|>")),
        _ => match family(name)?.reasoning {
            Reasoning::Tagged(o, c) | Reasoning::Opened(o, c) => Some((o, c)),
            Reasoning::None => None,
        },
    }
}

/// An example text of `n`: the first alternative, optional parts and repetitions left out, one
/// `…` for free text.
fn sample(rules: &Rules, n: &Node, out: &mut String, depth: usize) {
    if depth > 40 {
        return;
    }
    match n {
        Node::Lit(l) => out.push_str(l),
        Node::Seq(items) => {
            for i in items {
                sample(rules, i, out, depth + 1);
            }
        }
        Node::Alt(items) => {
            if let Some(first) = items.first() {
                sample(rules, first, out, depth + 1);
            }
        }
        Node::Opt(_) | Node::Star(_) => {}
        Node::Ref(r) if r.ends_with("-string") => out.push_str(match r.as_str() {
            "py-string" => "'…'",
            "gm-string" => "<|\"|>…<|\"|>",
            _ => "\"…\"",
        }),
        Node::Ref(r) if r == "call-id" => out.push_str("a1b2c3d4e"),
        // Whitespace: a newline after a closing tag, else nothing.
        Node::Ref(r) if r == "ws" => {
            if out.ends_with('>') {
                out.push('\n');
            }
        }
        Node::Ref(r) => {
            if let Some(body) = rules.get(r) {
                sample(rules, body, out, depth + 1);
            }
        }
        Node::Class { ranges, negated } => {
            if !negated {
                if let Some((a, _)) = ranges.first() {
                    out.push(*a);
                }
            }
        }
        Node::WsLit(l) => out.push_str(l),
        Node::Text { .. } => out.push('…'),
        Node::TextThen { end, .. } => {
            out.push('…');
            out.push_str(end);
        }
    }
}

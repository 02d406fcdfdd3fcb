//! chatparse and SGLang's gateway parsers (`tool-parser` + `reasoning-parser` 1.10.0, Rust) on
//! the formats both handle: the pairing of a shipped name with the peer's parsers, and both
//! sides' one-shot and streamed results in one shape ([`Parsed`]) for the differential test and
//! the benchmarks.
//!
//! The peer is driven as SGLang's gateway drives it: the reasoning parser first, its normal text
//! into the tool parser; calls' arguments are JSON text; streamed results are the concatenation
//! of every delta.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use chatparse::runtime::openai::{self, CounterIds, DeltaStream, Options};
use chatparse::runtime::Spec;
use chatparse::Value;
use openai_protocol::common::Tool;
use reasoning_parser::ReasoningParser;
use tool_parser::ToolParser;

/// A format both handle: a chatparse shipped name and the peer's parser names.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    /// The chatparse shipped name.
    pub name: &'static str,
    /// The peer's tool parser (`tool_parser::ParserFactory` name).
    pub tool: &'static str,
    /// The peer's reasoning parser, for formats with reasoning.
    pub reasoning: Option<&'static str>,
    /// The format's end-of-turn tokens. A server stops at them and strips special tokens before
    /// its parser sees the text, so both sides get the output without a trailing one
    /// ([`Pair::server_text`]).
    pub eos: &'static [&'static str],
    /// The chat template's generation prompt opens reasoning (`<think>` prefilled), so the
    /// output starts inside it: the peer is told so (`mark_reasoning_started`), chatparse's
    /// shipped spec reads it from the output's `</think>`.
    pub prompt_think: bool,
}

impl Pair {
    /// `text` as a server hands it to a parser: without a trailing end-of-turn token.
    pub fn server_text<'t>(&self, text: &'t str) -> &'t str {
        let trimmed = text.trim_end();
        self.eos
            .iter()
            .find_map(|t| trimmed.strip_suffix(t))
            .unwrap_or(text)
    }
}

/// The formats both handle, with the parsers SGLang's gateway uses for those models.
pub const PAIRS: &[Pair] = &[
    Pair {
        name: "hermes",
        tool: "qwen",
        reasoning: None,
        eos: &["<|im_end|>"],
        prompt_think: false,
    },
    Pair {
        name: "qwen3",
        tool: "qwen",
        reasoning: Some("qwen3"),
        eos: &["<|im_end|>", "<|endoftext|>"],
        prompt_think: false,
    },
    Pair {
        name: "qwen3_coder",
        tool: "qwen_coder",
        reasoning: None,
        eos: &["<|im_end|>", "<|endoftext|>"],
        prompt_think: false,
    },
    Pair {
        name: "qwen3_5",
        tool: "qwen_xml",
        reasoning: Some("qwen3_thinking"),
        eos: &["<|im_end|>", "<|endoftext|>"],
        prompt_think: true,
    },
    Pair {
        name: "llama3_json",
        tool: "llama",
        reasoning: None,
        eos: &["<|eom_id|>", "<|eot_id|>", "<|end_of_text|>"],
        prompt_think: false,
    },
    Pair {
        name: "mistral_nemo",
        tool: "mistral",
        reasoning: None,
        eos: &["</s>"],
        prompt_think: false,
    },
    Pair {
        name: "mistral_small",
        tool: "mistral",
        reasoning: None,
        eos: &["</s>"],
        prompt_think: false,
    },
    Pair {
        name: "deepseek_r1",
        tool: "deepseek",
        reasoning: Some("deepseek_r1"),
        eos: &["<｜end▁of▁sentence｜>"],
        prompt_think: true,
    },
    Pair {
        name: "deepseek_v3_1",
        tool: "deepseek31",
        reasoning: Some("deepseek_v31"),
        eos: &["<｜end▁of▁sentence｜>"],
        prompt_think: true,
    },
    Pair {
        name: "deepseek_v3_2",
        tool: "deepseek32",
        reasoning: Some("deepseek_v31"),
        eos: &["<｜end▁of▁sentence｜>"],
        prompt_think: true,
    },
    Pair {
        name: "kimi_k2",
        tool: "kimik2",
        reasoning: Some("kimi_thinking"),
        eos: &["<|im_end|>", "[EOS]"],
        prompt_think: false,
    },
    Pair {
        name: "glm4_5",
        tool: "glm45_moe",
        reasoning: Some("glm45"),
        eos: &["<|user|>", "<|observation|>", "<|endoftext|>"],
        prompt_think: false,
    },
    Pair {
        name: "minimax_m2",
        tool: "minimax_m2",
        reasoning: Some("minimax"),
        eos: &["[e~["],
        prompt_think: true,
    },
    Pair {
        name: "cohere_command_r7b",
        tool: "cohere",
        reasoning: Some("cohere_cmd"),
        eos: &["<|END_OF_TURN_TOKEN|>"],
        prompt_think: false,
    },
    Pair {
        name: "gemma4",
        tool: "gemma4",
        reasoning: Some("gemma4"),
        eos: &["<turn|>", "<eos>"],
        prompt_think: false,
    },
];

/// A message as both sides can say it: reasoning, content and calls (name, arguments JSON text).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub reasoning: String,
    pub content: String,
    pub calls: Vec<(String, String)>,
}

impl Parsed {
    /// Whether `other` says the same, comparing arguments as JSON values (the peer re-serializes
    /// arguments; chatparse keeps the model's text) and text exactly.
    pub fn same_as(&self, other: &Parsed) -> bool {
        self.reasoning == other.reasoning
            && self.content == other.content
            && self.calls.len() == other.calls.len()
            && self.calls.iter().zip(&other.calls).all(|(a, b)| {
                a.0 == b.0
                    && serde_json::from_str::<serde_json::Value>(&a.1).ok()
                        == serde_json::from_str::<serde_json::Value>(&b.1).ok()
            })
    }
}

/// Runs a future that never waits (the peer's `async` methods compute and return).
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

/// The tools offered: the peer's streaming parsers drop calls to tools not offered.
pub fn tools_json(names: &[String]) -> Value {
    Value::Array(
        names
            .iter()
            .map(|n| {
                chatparse::json!({"type": "function", "function": {"name": n,
                    "parameters": {"type": "object", "properties": {}}}})
            })
            .collect(),
    )
}

/// The peer's parsers for one format.
pub struct Peer {
    pub tool: Box<dyn ToolParser>,
    pub reasoning: Option<Box<dyn ReasoningParser>>,
    prompt_think: bool,
}

impl Peer {
    /// Fresh parsers for `pair`.
    pub fn new(pair: &Pair) -> Peer {
        let tool = tool_parser::ParserFactory::new()
            .registry()
            .create_parser(pair.tool)
            .unwrap_or_else(|| panic!("the peer has no tool parser {}", pair.tool));
        let reasoning = pair.reasoning.map(|r| {
            reasoning_parser::ParserFactory::new()
                .registry()
                .create_parser(r)
                .unwrap_or_else(|| panic!("the peer has no reasoning parser {r}"))
        });
        Peer {
            tool,
            reasoning,
            prompt_think: pair.prompt_think,
        }
    }

    /// Ready for a new message.
    pub fn reset(&mut self) {
        self.tool.reset();
        if let Some(r) = &mut self.reasoning {
            r.reset();
            if self.prompt_think {
                r.mark_reasoning_started();
            }
        }
    }

    /// The peer's one-shot parse; `None` when it fails the message.
    pub fn parse(&mut self, text: &str) -> Option<Parsed> {
        self.reset();
        let (reasoning, normal) = match &mut self.reasoning {
            Some(r) => {
                let out = r.detect_and_parse_reasoning(text).ok()?;
                (out.reasoning_text, out.normal_text)
            }
            None => (String::new(), text.to_owned()),
        };
        let (content, calls) = block_on(self.tool.parse_complete(&normal)).ok()?;
        Some(Parsed {
            reasoning,
            content,
            calls: calls
                .into_iter()
                .map(|c| (c.function.name, c.function.arguments))
                .collect(),
        })
    }

    /// The peer's streamed parse of `chunks`, as a gateway assembles it: every delta
    /// concatenated, then what the parsers hand back at the end of the stream
    /// (`flush`, `get_unstreamed_tool_args`, `take_unstreamed_normal_text`); `None` when it fails.
    pub fn stream<'a>(
        &mut self,
        chunks: impl IntoIterator<Item = &'a str>,
        tools: &[Tool],
    ) -> Option<Parsed> {
        self.reset();
        let mut out = Parsed::default();
        let mut names: Vec<Option<String>> = Vec::new();
        let mut arguments: Vec<String> = Vec::new();
        let mut take = |result: tool_parser::StreamingParseResult, out: &mut Parsed| {
            out.content.push_str(&result.normal_text);
            for item in result.calls {
                let at = item.tool_index;
                if names.len() <= at {
                    names.resize(at + 1, None);
                    arguments.resize(at + 1, String::new());
                }
                if let Some(name) = item.name {
                    names[at] = Some(name);
                }
                arguments[at].push_str(&item.parameters);
            }
        };
        for chunk in chunks {
            let normal = match &mut self.reasoning {
                Some(r) => {
                    let result = r.parse_reasoning_streaming_incremental(chunk).ok()?;
                    out.reasoning.push_str(&result.reasoning_text);
                    result.normal_text
                }
                None => chunk.to_owned(),
            };
            if !normal.is_empty() {
                let result = block_on(self.tool.parse_incremental(&normal, tools)).ok()?;
                take(result, &mut out);
            }
        }
        if let Some(r) = &mut self.reasoning {
            let result = r.flush().ok()?;
            out.reasoning.push_str(&result.reasoning_text);
            if !result.normal_text.is_empty() {
                let result =
                    block_on(self.tool.parse_incremental(&result.normal_text, tools)).ok()?;
                take(result, &mut out);
            }
        }
        if let Some(rest) = self.tool.get_unstreamed_tool_args() {
            take(
                tool_parser::StreamingParseResult {
                    normal_text: String::new(),
                    calls: rest,
                },
                &mut out,
            );
        }
        let tail = self.tool.take_unstreamed_normal_text();
        out.content.push_str(&tail);
        out.calls = names
            .into_iter()
            .zip(arguments)
            .map(|(name, args)| (name.unwrap_or_default(), args))
            .collect();
        Some(out)
    }
}

/// The peer's tool type (OpenAI's), from JSON.
pub fn tools(json: &Value) -> Vec<Tool> {
    serde_json::from_value(serde_json::Value::from(json.clone())).expect("tools in OpenAI's shape")
}

/// chatparse's one-shot parse, as an OpenAI message (`openai::parse`), in the shared shape.
pub fn chatparse_parse(spec: &Spec, text: &str) -> Option<Parsed> {
    let message = openai::parse(
        spec,
        text,
        None,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .ok()?;
    Some(from_message(&message))
}

/// chatparse's streamed parse through the OpenAI adapter: every delta concatenated.
pub fn chatparse_stream<'a>(
    spec: &Spec,
    chunks: impl IntoIterator<Item = &'a str>,
) -> Option<Parsed> {
    let mut stream = DeltaStream::from_spec(
        spec,
        None,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .ok()?;
    let mut out = Parsed::default();
    let mut sink = |delta: openai::Delta<'_>| match delta {
        openai::Delta::Content(t) => out.content.push_str(t),
        openai::Delta::Reasoning(t) => out.reasoning.push_str(t),
        openai::Delta::CallStart { name, .. } => out.calls.push((name.to_owned(), String::new())),
        openai::Delta::CallArguments { index, arguments } => out.calls[index].1.push_str(arguments),
        _ => {}
    };
    for chunk in chunks {
        stream.feed_with(chunk, &mut sink).ok()?;
    }
    stream.finish_with(&mut sink).ok()?;
    Some(out)
}

/// An OpenAI assistant message in the shared shape.
pub fn from_message(message: &Value) -> Parsed {
    let text = |key: &str| {
        message
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    Parsed {
        reasoning: text("reasoning_content"),
        content: text("content"),
        calls: message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                (
                    c["function"]["name"].as_str().unwrap_or("").to_owned(),
                    c["function"]["arguments"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect(),
    }
}

/// Cuts `text` as a server's detokenizer hands it over: every marker of the format (a special
/// token: `<|…|>`, `<｜…｜>`, `<tag>`/`</tag>`, `[TOOL_CALLS]`-style, or one of `extra`) in one
/// chunk of its own, the text between in chunks of up to 4 bytes.
pub fn token_chunks<'t>(text: &'t str, extra: &[&str]) -> Vec<&'t str> {
    static MARKER: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let marker = MARKER.get_or_init(|| {
        regex::Regex::new(r"<\|[^|<>]{1,40}\|>|<｜[^｜]{1,40}｜>|</?[A-Za-z_][A-Za-z0-9_:=.\-|]{0,40}>|\[[A-Z_]{2,20}\]")
            .expect("a valid pattern")
    });
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let len = extra
            .iter()
            .filter(|m| !m.is_empty() && rest.starts_with(**m))
            .map(|m| m.len())
            .max()
            .or_else(|| {
                marker
                    .find(rest)
                    .filter(|m| m.start() == 0)
                    .map(|m| m.end())
            });
        let end = match len {
            Some(len) => at + len,
            None => {
                let next = marker
                    .find(rest)
                    .map_or(text.len(), |m| at + m.start().max(1));
                let mut end = (at + 4).min(next).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                end
            }
        };
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// Cuts `text` into chunks of `size` bytes (at char boundaries).
pub fn chunks(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

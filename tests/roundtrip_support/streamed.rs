//! The streamed template round trips (see `tests/roundtrip/README.md`): every rendered final
//! assistant turn of a family is fed to the family's shipped stream (`chatparse::shipped::spec`)
//! in many chunkings, and each stream must end in the one-shot parse of the same text (and so in
//! the original message, modulo the family's stated losses), with the `region_chunk` text of each
//! text field concatenating to its final value. When the rendered prompt opens (or opens and
//! closes) a reasoning block the profile reads, the turn is also streamed after that prompt and
//! compared with `Spec::parse_with_prefix`.

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use chatparse::runtime::stream::{Event, MessageStream};
use chatparse::runtime::Spec;
use chatparse::Value;

use super::tokens::{profile_tokens, special_token_at, token_cuts};
use super::{
    clip, load_renderer, render_turn, same_message, standard, templates_dir, templates_dir_wanted,
    Family, Outcome, Turn, CONVERSATIONS,
};
use crate::support::{char_boundaries, random_cuts, Rng};

/// Turns longer than this many bytes are long.
pub const SHORT_TURN: usize = 300;
/// Seeded random chunkings of a long turn.
pub const RANDOM_CHUNKINGS: usize = 200;
/// Seeded random chunkings of a short turn (besides its every split point).
pub const RANDOM_CHUNKINGS_SHORT: usize = 50;
/// Several tokens in one chunk (speculative decoding): token-like chunks grouped by this many.
pub const TOKEN_GROUP: usize = 3;

/// A seed per family and conversation (FNV-1a of both names), so that each failure reproduces
/// on its own whatever else runs.
fn seed(family: &str, conversation: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in family.bytes().chain([0]).chain(conversation.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// One chunking of a turn: a label for reports and the chunks' ends.
pub struct Chunking {
    pub label: String,
    pub cuts: Vec<usize>,
}

/// Every chunking a turn is streamed in: whole; in two chunks at every split point (every
/// character boundary); [`RANDOM_CHUNKINGS`] seeded random chunkings (long turns;
/// [`RANDOM_CHUNKINGS_SHORT`] for short ones); one character per chunk (the smallest piece a
/// `&str` feed can carry: 1 byte for ASCII); token-like chunks; token-like chunks in groups of
/// [`TOKEN_GROUP`]. Also how many special tokens the token-like chunking found.
pub fn chunkings(text: &str, literals: &[String], rng: &mut Rng) -> (Vec<Chunking>, usize) {
    let bounds = char_boundaries(text);
    let mut all = vec![Chunking {
        label: "whole".into(),
        cuts: vec![text.len()],
    }];
    for &b in &bounds[1..bounds.len().saturating_sub(1)] {
        all.push(Chunking {
            label: format!("split at byte {b}"),
            cuts: vec![b, text.len()],
        });
    }
    let random = if text.len() <= SHORT_TURN {
        RANDOM_CHUNKINGS_SHORT
    } else {
        RANDOM_CHUNKINGS
    };
    for i in 0..random {
        all.push(Chunking {
            label: format!("random chunking #{i}"),
            cuts: random_cuts(text, rng),
        });
    }
    all.push(Chunking {
        label: "one character per chunk".into(),
        cuts: bounds.iter().copied().skip(1).collect(),
    });
    let (tokens, specials) = token_cuts(text, literals);
    let grouped: Vec<usize> = tokens
        .iter()
        .copied()
        .enumerate()
        .filter(|(i, _)| (i + 1) % TOKEN_GROUP == 0 || i + 1 == tokens.len())
        .map(|(_, cut)| cut)
        .collect();
    all.push(Chunking {
        label: "token-like chunks".into(),
        cuts: tokens,
    });
    all.push(Chunking {
        label: format!("token-like chunks, {TOKEN_GROUP} per feed"),
        cuts: grouped,
    });
    (all, specials)
}

/// What a stream produced.
#[derive(Default)]
pub struct Streamed {
    /// The final message, or the error (of a feed or of the finish) as text.
    pub message: Option<Result<Value, String>>,
    /// Per field, the `region_chunk` texts concatenated (initial events, feeds and finish).
    pub texts: Vec<(String, String)>,
    /// Per field, the `region_close` values in order.
    pub closes: Vec<(String, Value)>,
    /// Per field, the bytes of `region_chunk` text handed out before `finish` (initial events
    /// and feeds).
    pub early: Vec<(String, usize)>,
}

impl Streamed {
    fn record(&mut self, event: Event<'_>, early: bool) {
        match event {
            Event::RegionChunk { field, text, .. } => {
                if early {
                    match self.early.iter_mut().find(|(f, _)| f == field) {
                        Some((_, n)) => *n += text.len(),
                        None => self.early.push((field.to_owned(), text.len())),
                    }
                }
                match self.texts.iter_mut().find(|(f, _)| f == field) {
                    Some((_, t)) => t.push_str(&text),
                    None => self.texts.push((field.to_owned(), text.into_owned())),
                }
            }
            Event::RegionClose { field, value } => self.closes.push((field.to_owned(), value)),
            Event::RegionOpen { .. } => {}
            other => panic!("a strict stream sent {other:?}"),
        }
    }

    fn text(&self, field: &str) -> Option<&str> {
        self.texts
            .iter()
            .find(|(f, _)| f == field)
            .map(|(_, t)| t.as_str())
    }
}

/// Stream `text` in the chunks ending at `cuts`; a panic in the stream is returned as an error.
pub fn stream(spec: &Spec, prefix: Option<&str>, text: &str, cuts: &[usize]) -> Streamed {
    let run = || {
        let mut out = Streamed::default();
        let mut parser: Box<dyn MessageStream + '_> = match spec.stream(prefix, None) {
            Ok(parser) => parser,
            Err(e) => {
                out.message = Some(Err(format!("the stream does not start: {e}")));
                return out;
            }
        };
        parser.initial_events_with(&mut |e| out.record(e, true));
        let mut at = 0;
        for &cut in cuts {
            if let Err(e) = parser.feed_with(&text[at..cut], &mut |e| out.record(e, true)) {
                out.message = Some(Err(e.to_string()));
                return out;
            }
            at = cut;
        }
        let message = parser.finish_with(&mut |e| out.record(e, false));
        out.message = Some(message.map_err(|e| e.to_string()));
        out
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        Streamed {
            message: Some(Err(format!("the stream panicked: {what}"))),
            ..Streamed::default()
        }
    })
}

/// The fields whose `region_chunk` text is their value: the profile's reasoning and content
/// fields, or (families that stream through their own regexes) every string property with an
/// `x-regex` and no `x-parser`.
pub fn text_fields(spec: &Spec) -> Vec<String> {
    if let Some(profile) = spec.stream_profile() {
        return profile
            .reasoning
            .iter()
            .map(|r| r.field.clone())
            .chain(profile.content.iter().map(|c| c.field.clone()))
            .collect();
    }
    let Some(schema) = spec.schema() else {
        return Vec::new();
    };
    let mut fields = Vec::new();
    if let Some(properties) = schema.as_value()["properties"].as_object() {
        for (name, property) in properties {
            if property["type"] == "string"
                && property.get("x-regex").is_some()
                && property.get("x-parser").is_none()
            {
                fields.push(name.clone());
            }
        }
    }
    fields
}

/// Serialised exactly (key order, number text): "the streamed message equals the one-shot
/// parse" means the same JSON text.
fn exact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// What is wrong with one stream of a turn, given the one-shot parse of the same text.
fn problem(
    got: &Streamed,
    one_shot: &Result<Value, String>,
    want: Option<&Value>,
    fields: &[String],
) -> Option<String> {
    let message = got.message.as_ref()?;
    match (one_shot, message) {
        (Ok(a), Ok(b)) if exact(a) == exact(b) => {}
        (Err(a), Err(b)) if a == b => {}
        _ => {
            return Some(format!(
                "the streamed message is not the one-shot parse\n      streamed: {}\n      one-shot: {}",
                show(message),
                show(one_shot)
            ))
        }
    }
    let Ok(message) = message else {
        return None;
    };
    if let Some(want) = want.filter(|want| !same_message(message, want)) {
        return Some(format!(
            "the streamed message is not the wanted message\n      streamed: {message}\n      want:     {want}"
        ));
    }
    for field in fields {
        let value = message.get(field.as_str());
        let text = got.text(field);
        match (value.and_then(Value::as_str), text) {
            (Some(v), Some(t)) if v == t => {}
            (Some(""), None) | (None, None) => {}
            (v, t) => {
                return Some(format!(
                    "{field}: the region_chunk texts concatenate to {t:?}, the final value is {v:?}"
                ))
            }
        }
        let closes: Vec<&Value> = got
            .closes
            .iter()
            .filter(|(f, _)| f == field)
            .map(|(_, v)| v)
            .collect();
        if let Some(value) = value {
            if closes.len() != 1 || exact(closes[0]) != exact(value) {
                return Some(format!(
                    "{field}: region_close values {closes:?}, the final value is {value}"
                ));
            }
        }
    }
    None
}

fn show(v: &Result<Value, String>) -> String {
    match v {
        Ok(v) => v.to_string(),
        Err(e) => format!("error: {e}"),
    }
}

/// The chunks of a chunking, for a failure report.
fn show_chunks(text: &str, cuts: &[usize]) -> String {
    let mut at = 0;
    let chunks: Vec<&str> = cuts
        .iter()
        .map(|&cut| {
            let chunk = &text[at..cut];
            at = cut;
            chunk
        })
        .collect();
    clip(&format!("{chunks:?}"), 600)
}

/// What a rendered prompt holds of the reasoning block the family's stream profile reads: its
/// tail from the last reasoning opener on ([`StreamProfile::prefix_tail`]), which
/// `Spec::parse_with_prefix` and the stream parse in front of the output.
///
/// [`StreamProfile::prefix_tail`]: chatparse::runtime::stream::StreamProfile::prefix_tail
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptReasoning {
    /// No reasoning opener in the prompt (or no profile): the prefix changes nothing.
    None,
    /// The generation prompt opened reasoning (`<think>` or `<think>\n` at its end).
    Open,
    /// The generation prompt opened and closed it (`<think>\n\n</think>\n\n`: thinking off).
    Closed,
    /// The last opener belongs to an earlier assistant turn: a closer and more turns follow it.
    Earlier,
}

impl PromptReasoning {
    fn describe(self) -> &'static str {
        match self {
            PromptReasoning::None => "",
            PromptReasoning::Open => "opens reasoning",
            PromptReasoning::Closed => "opens and closes reasoning",
            PromptReasoning::Earlier => "holds an earlier turn's reasoning block",
        }
    }
}

pub fn prompt_reasoning(spec: &Spec, prompt: &str) -> PromptReasoning {
    let Some(profile) = spec.stream_profile() else {
        return PromptReasoning::None;
    };
    let tail = profile.prefix_tail(prompt);
    if tail.is_empty() {
        return PromptReasoning::None;
    }
    let closed_at = profile.reasoning.as_ref().and_then(|r| {
        r.close
            .iter()
            .filter_map(|c| tail.find(c.as_str()).map(|at| at + c.len()))
            .min()
    });
    match closed_at {
        None => PromptReasoning::Open,
        Some(end) if tail[end..].trim().is_empty() => PromptReasoning::Closed,
        Some(_) => PromptReasoning::Earlier,
    }
}

/// The outcome of streaming one turn (without and, when it matters, with the prompt).
pub struct TurnReport {
    pub chunkings: usize,
    /// In token-like chunks, without and (when it matters) with the prompt: the text fields'
    /// bytes streamed before the end, and their final length.
    pub early: Vec<(usize, usize)>,
    pub specials: usize,
    pub prompt: PromptReasoning,
    pub failures: Vec<String>,
}

/// Stream one rendered turn in every chunking, without a prefix and (when the prompt leaves a
/// reasoning block the profile reads) after the prompt.
pub fn check_turn(
    family: &str,
    conversation: &str,
    spec: &Spec,
    turn: &Turn,
    fields: &[String],
    literals: &[String],
) -> TurnReport {
    let mut rng = Rng::new(seed(family, conversation));
    let (chunkings, specials) = chunkings(&turn.tail, literals, &mut rng);
    let prompt = prompt_reasoning(spec, &turn.prompt);
    let mut report = TurnReport {
        chunkings: chunkings.len(),
        early: Vec::new(),
        specials,
        prompt,
        failures: Vec::new(),
    };
    let mut runs: Vec<(Option<&str>, Result<Value, String>)> =
        vec![(None, spec.parse(&turn.tail).map_err(|e| e.to_string()))];
    if prompt != PromptReasoning::None {
        runs.push((
            Some(turn.prompt.as_str()),
            spec.parse_with_prefix(&turn.tail, &turn.prompt)
                .map_err(|e| e.to_string()),
        ));
    }
    for (prefix, one_shot) in &runs {
        // With or without the prompt, the stream gives the wanted message back (an earlier
        // turn's reasoning block in the prompt is not read: `prompt_reasoning_of_an_earlier_turn`).
        let want = Some(&turn.want);
        let mut failed = 0;
        let mut first = None;
        for chunking in &chunkings {
            let got = stream(spec, *prefix, &turn.tail, &chunking.cuts);
            if chunking.label == "token-like chunks" {
                if let Some(Ok(message)) = &got.message {
                    let total = fields
                        .iter()
                        .filter_map(|f| message.get(f.as_str()).and_then(Value::as_str))
                        .map(str::len)
                        .sum();
                    let early = got
                        .early
                        .iter()
                        .filter(|(f, _)| fields.contains(f))
                        .map(|(_, n)| n)
                        .sum();
                    report.early.push((early, total));
                }
            }
            if let Some(why) = problem(&got, one_shot, want, fields) {
                failed += 1;
                first.get_or_insert((chunking, why));
            }
        }
        if let Some((chunking, why)) = first {
            let mut s = format!(
                "[{family}] {conversation}{}: {failed} of {} chunkings fail; first: {}\n      {why}\n      chunks: {}",
                match prefix {
                    Some(_) => format!(" (after the prompt, which {})", prompt.describe()),
                    None => String::new(),
                },
                chunkings.len(),
                chunking.label,
                show_chunks(&turn.tail, &chunking.cuts),
            );
            if let Some(p) = prefix {
                let _ = write!(
                    s,
                    "\n      prompt tail: {:?}",
                    clip(&p[p.len().saturating_sub(120)..], 120)
                );
            }
            report.failures.push(s);
        }
    }
    report
}

/// The body of each family's streamed test (`streamed::<name>`): its summary, or every failure.
pub fn streamed_family_test(name: &str) -> Result<String, String> {
    let templates = templates_dir().ok_or_else(|| {
        format!(
            "chat templates directory not found at {}: set CHATPARSE_TEMPLATES or provide ../shared/chat_templates",
            templates_dir_wanted().display()
        )
    })?;
    let family = Family::load(name)
        .map_err(|errors| format!("tests/roundtrip/{name}.json:\n  {}", errors.join("\n  ")))?;
    let spec = chatparse::shipped::spec(&family.schema)
        .ok_or_else(|| format!("{}: not a shipped name", family.schema))?
        .map_err(|e| format!("{}: {e}", family.schema))?;
    let std = standard();
    let mut renderer = load_renderer(&family, &std, &templates)?;
    let fields = text_fields(&spec);
    let literals = profile_tokens(&spec);
    let mut summary = format!("{name} (streamed):");
    let mut failures = Vec::new();
    let mut specials = 0;
    for id in CONVERSATIONS {
        let turn = match render_turn(&family, &std, &mut renderer, id) {
            Ok(turn) => turn,
            Err(Outcome::Skipped(why)) => {
                let _ = write!(summary, "\n  {id}: skipped ({why})");
                continue;
            }
            Err(Outcome::Failed(f)) => {
                failures.push(format!("[{name}] {id}: {}", f.problem));
                continue;
            }
            Err(_) => continue,
        };
        let report = check_turn(name, id, &spec, &turn, &fields, &literals);
        specials += report.specials;
        let _ = write!(
            summary,
            "\n  {id}: {} ({} bytes, {} chunkings, {} special tokens; text bytes streamed before the end in token-like chunks: {}{})",
            if report.failures.is_empty() {
                "ok"
            } else {
                "FAILED"
            },
            turn.tail.len(),
            report.chunkings,
            report.specials,
            report
                .early
                .iter()
                .map(|(early, total)| format!("{early} of {total}"))
                .collect::<Vec<_>>()
                .join(", after the prompt "),
            match report.prompt {
                PromptReasoning::None => String::new(),
                p => format!("; also after the prompt, which {}", p.describe()),
            }
        );
        failures.extend(report.failures);
    }
    if specials == 0 {
        failures.push(format!(
            "[{name}] the token-like chunking found no special token in any turn"
        ));
    }
    if failures.is_empty() {
        Ok(summary)
    } else {
        Err(format!(
            "streamed template round trip of family {name} ({} with {}) failed:\n{}\n{summary}",
            family.schema,
            family.template,
            failures.join("\n")
        ))
    }
}

/// A regression check (the streamed round trips found it): after a prompt whose last
/// reasoning block belongs to an earlier assistant turn ([`PromptReasoning::Earlier`]: a
/// multi-turn conversation, as every server hands it over), `Spec::parse_with_prefix` (and so the
/// stream, and `chatparse parse --prefix`) must give the message the turn holds, as the parse
/// without the prompt does. `StreamProfile::prefix_tail` once took the prompt from its last
/// reasoning opener on, so the earlier turn (its calls, its end token, the tool results) was
/// parsed in front of the output.
pub fn prompt_reasoning_of_an_earlier_turn() -> Result<(), String> {
    let mut failures = Vec::new();
    // The smallest case: qwen3, one earlier turn with reasoning and a call.
    let spec = chatparse::shipped::spec("qwen3")
        .ok_or("qwen3 is shipped")?
        .map_err(|e| e.to_string())?;
    let prompt = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>\nCall it.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n<|im_start|>assistant\n";
    let output = "It is sunny.<|im_end|>";
    let want = chatparse::json!({"role": "assistant", "content": "It is sunny."});
    match spec.parse_with_prefix(output, prompt) {
        Ok(got) if same_message(&got, &want) => {}
        got => failures.push(format!(
            "[qwen3] parse_with_prefix({output:?}, {prompt:?})\n      got:  {}\n      want: {want}",
            show(&got.map_err(|e| e.to_string()))
        )),
    }
    // Every rendered turn whose prompt holds an earlier turn's reasoning block (with the chat
    // templates; without them the case above is the check).
    let Some(templates) = templates_dir() else {
        return if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("\n"))
        };
    };
    let std = standard();
    for name in super::family_names() {
        let family = Family::load(&name).map_err(|e| e.join("; "))?;
        let Some(Ok(spec)) = chatparse::shipped::spec(&family.schema) else {
            continue;
        };
        let mut renderer = load_renderer(&family, &std, &templates)?;
        for id in CONVERSATIONS {
            let Ok(turn) = render_turn(&family, &std, &mut renderer, id) else {
                continue;
            };
            if prompt_reasoning(&spec, &turn.prompt) != PromptReasoning::Earlier {
                continue;
            }
            let got = spec
                .parse_with_prefix(&turn.tail, &turn.prompt)
                .map_err(|e| e.to_string());
            if !got.as_ref().is_ok_and(|got| same_message(got, &turn.want)) {
                failures.push(format!(
                    "[{name}] {id}: parse_with_prefix of the rendered turn {:?} after its prompt\n      got:  {}\n      want: {}",
                    turn.tail,
                    show(&got),
                    turn.want
                ));
            }
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// The chunkers themselves: token-like chunks split where a tokenizer would, and every chunking
/// covers the whole text in order.
pub fn chunkers_are_sound() -> Result<(), String> {
    let spec = chatparse::shipped::spec("qwen3")
        .ok_or("qwen3 is shipped")?
        .map_err(|e| e.to_string())?;
    let literals = profile_tokens(&spec);
    let text = "<think>\nLet me see.\n</think>\n\nIt's 18 °C.<tool_call>\n{\"a\": [1, 2]}\n</tool_call><|im_end|>";
    let (cuts, specials) = token_cuts(text, &literals);
    let mut at = 0;
    let chunks: Vec<&str> = cuts
        .iter()
        .map(|&c| {
            let s = &text[at..c];
            at = c;
            s
        })
        .collect();
    let want = [
        "<think>",
        "\n",
        "Let",
        " me",
        " see",
        ".",
        "\n",
        "</think>",
        "\n\n",
        "It",
        "'",
        "s",
        " 18",
        " ",
        "°",
        "C",
        ".",
        "<tool_call>",
        "\n",
        "{",
        "\"",
        "a",
        "\"",
        ":",
        " ",
        "[",
        "1",
        ",",
        " 2",
        "]",
        "}",
        "\n",
        "</tool_call>",
        "<|im_end|>",
    ];
    if chunks != want || specials != 5 {
        return Err(format!(
            "token-like chunks of {text:?}: {chunks:?} ({specials} special tokens), want {want:?} (5)"
        ));
    }
    for (text, token) in [
        ("<|tool_call>call:f{}<tool_call|>", "<|tool_call>"),
        ("<tool_call|><turn|>", "<tool_call|>"),
        ("<|\"|>x<|\"|>", "<|\"|>"),
        (
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>",
            "<｜tool▁calls▁begin｜>",
        ),
        ("[TOOL_CALLS][ARGS]", "[TOOL_CALLS]"),
        ("<seed:think>x", "<seed:think>"),
    ] {
        if special_token_at(text, 0, &[]) != Some(token.len()) {
            return Err(format!(
                "{text:?} should start with the special token {token:?}"
            ));
        }
    }
    for text in ["<function=f>", "< b>", "<a b>", "[Tool]", "<>"] {
        if let Some(len) = special_token_at(text, 0, &[]) {
            return Err(format!(
                "{text:?}: {:?} is not a special token",
                &text[..len]
            ));
        }
    }
    let mut rng = Rng::new(7);
    let text = "a😀b".repeat(120);
    let (all, _) = chunkings(&text, &literals, &mut rng);
    if all.len() != 1 + (3 * 120 - 1) + RANDOM_CHUNKINGS + 3 {
        return Err(format!("{} chunkings of a long text", all.len()));
    }
    for chunking in &all {
        let mut at = 0;
        for &cut in &chunking.cuts {
            if cut <= at || !text.is_char_boundary(cut) {
                return Err(format!("{}: bad cut {cut} after {at}", chunking.label));
            }
            at = cut;
        }
        if at != text.len() {
            return Err(format!(
                "{}: ends at {at} of {}",
                chunking.label,
                text.len()
            ));
        }
    }
    let short = "x".repeat(SHORT_TURN);
    let (all, _) = chunkings(&short, &literals, &mut rng);
    if all.len() != 1 + (SHORT_TURN - 1) + RANDOM_CHUNKINGS_SHORT + 3 {
        return Err(format!("{} chunkings of a short text", all.len()));
    }
    Ok(())
}

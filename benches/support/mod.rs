//! Benchmark inputs: one realistic message per shipped schema, grown to each target size by
//! padding its longest free-text field (the reasoning where the schema has one).
//!
//! The base message is the schema's richest example (`examples/<schema>/*.txt`: tool calls and
//! reasoning preferred). Padding inserts plain words (letters, spaces, full stops, newlines: no
//! delimiter can appear in it) inside that field, so the padded message parses to the same shape
//! with a longer field. Every input is written to `target/bench-inputs/<schema>.<size>.txt` so that
//! `scripts/reference/bench.py` times the Python reference on exactly the same bytes.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use chatparse::Schema;
use chatparse::Value;

/// The sizes every schema is measured at, with their names.
pub const SIZES: &[(&str, usize)] = &[
    ("200B", 0),
    ("4KB", 4 << 10),
    ("64KB", 64 << 10),
    ("1MB", 1 << 20),
];

/// Fields that hold reasoning in the shipped schemas, preferred for padding.
const REASONING_FIELDS: &[&str] = &["thinking", "reasoning_content", "reasoning"];

/// One benchmark input.
pub struct Input {
    pub schema: &'static str,
    pub size: &'static str,
    pub text: String,
}

/// The example a schema's inputs are grown from, and the field that grows.
pub struct Base {
    pub text: String,
    /// Byte offset in `text` where padding goes (inside the padded field).
    pub insert_at: usize,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Deterministic filler of exactly `len` bytes: words, spaces, full stops and newlines.
pub fn filler(len: usize) -> String {
    const WORDS: &[&str] = &[
        "the",
        "model",
        "considers",
        "whether",
        "another",
        "step",
        "is",
        "needed",
        "and",
        "checks",
        "each",
        "assumption",
        "again",
        "before",
        "answering",
        "carefully",
    ];
    let mut out = String::with_capacity(len + 16);
    let mut i = 0usize;
    while out.len() < len {
        out.push_str(WORDS[(i * 7 + i / 5) % WORDS.len()]);
        i += 1;
        out.push(match i % 23 {
            0 => '\n',
            11 => '.',
            _ => ' ',
        });
    }
    out.truncate(len);
    out
}

fn score(message: &Value) -> (usize, usize, usize) {
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let reasoning = REASONING_FIELDS
        .iter()
        .any(|f| message.get(f).is_some_and(Value::is_string));
    let content = message.get("content").is_some_and(Value::is_string);
    (calls.min(1), usize::from(reasoning), usize::from(content))
}

/// The field to pad: reasoning if present, else content, else the longest top-level string.
fn padded_field(message: &Value) -> Option<String> {
    let object = message.as_object()?;
    for field in REASONING_FIELDS.iter().chain(&["content"]) {
        if let Some(Value::String(s)) = object.get(*field) {
            if s.contains(' ') {
                return Some(s.clone());
            }
        }
    }
    object
        .values()
        .filter_map(Value::as_str)
        .filter(|s| s.contains(' '))
        .max_by_key(|s| s.len())
        .map(str::to_string)
}

fn example_files(name: &str) -> Vec<PathBuf> {
    let dir = root().join("examples").join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("readable examples directory").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

/// ASCII filler of `len` bytes (whole sentences, then spaces): the padding of the streamed
/// response-template inputs (`benches/stream.rs`, `examples/openai_cost.rs`).
pub fn sentences(len: usize) -> String {
    let mut s = String::with_capacity(len);
    let mut i = 0;
    loop {
        let sentence = format!("Step {i}: consider the weather in city number {i}. ");
        if s.len() + sentence.len() > len {
            break;
        }
        s.push_str(&sentence);
        i += 1;
    }
    while s.len() < len {
        s.push(' ');
    }
    s
}

/// Splits at most `size` bytes at a time, at char boundaries.
pub fn chunks(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        if end == at {
            end = at + text[at..].chars().next().map_or(1, char::len_utf8);
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// Every example of `schema` as `(file stem, text)`, in file-name order.
pub fn examples(name: &str) -> Vec<(String, String)> {
    example_files(name)
        .into_iter()
        .map(|path| {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("example names are UTF-8")
                .to_string();
            let text = std::fs::read_to_string(&path).expect("example is UTF-8");
            (stem, text)
        })
        .collect()
}

/// The richest example of `schema` and where to pad it.
pub fn base(name: &str, schema: &Schema) -> Base {
    let files = example_files(name);
    let mut best: Option<((usize, usize, usize), Base)> = None;
    for path in files {
        let text = std::fs::read_to_string(&path).expect("example is UTF-8");
        let Ok(message) = schema.parse(&text) else {
            continue;
        };
        let Some(field) = padded_field(&message) else {
            continue;
        };
        let Some(at) = text.find(&field) else {
            continue;
        };
        let space = field.find(' ').expect("padded field has a space");
        let s = score(&message);
        // The richest message; among equals, the shortest.
        if best
            .as_ref()
            .is_none_or(|(b, base)| s > *b || (s == *b && text.len() < base.text.len()))
        {
            best = Some((
                s,
                Base {
                    text,
                    insert_at: at + space + 1,
                },
            ));
        }
    }
    best.unwrap_or_else(|| panic!("no usable example for {name}"))
        .1
}

/// `base` grown to `size` bytes (or left as is when it is already longer).
pub fn grow(base: &Base, size: usize) -> String {
    let pad = size.saturating_sub(base.text.len());
    let mut text = String::with_capacity(base.text.len() + pad);
    text.push_str(&base.text[..base.insert_at]);
    text.push_str(&filler(pad));
    if pad > 0 && !text.ends_with(' ') {
        text.push(' ');
    }
    text.push_str(&base.text[base.insert_at..]);
    text
}

/// Every schema at every size; also written to `target/bench-inputs/`.
pub fn inputs() -> Vec<Input> {
    let out_dir = root().join("target/bench-inputs");
    let _ = std::fs::create_dir_all(&out_dir);
    let mut inputs = Vec::new();
    for name in chatparse::shipped::names() {
        let schema = chatparse::shipped::schema(name).expect("shipped schema");
        let base = base(name, &schema);
        for &(size_name, size) in SIZES {
            let text = grow(&base, size);
            write_if_changed(&out_dir.join(format!("{name}.{size_name}.txt")), &text);
            inputs.push(Input {
                schema: name,
                size: size_name,
                text,
            });
        }
    }
    inputs
}

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        let _ = std::fs::write(path, text);
    }
}

pub mod floor;

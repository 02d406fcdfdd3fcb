//! Shared test support: loading the reference corpus and comparing JSON the way the reference's
//! values compare (Python int vs float kept apart, key order significant).
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use chatparse::{Number, Value};

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One expected outcome produced by `scripts/reference/generate.py`.
pub struct Case {
    pub suite: String,
    pub name: String,
    pub input: String,
    pub expect: Expect,
}

pub enum Expect {
    Value(Value),
    Error(String),
    Unrepresentable(String),
}

pub struct Suite {
    pub name: String,
    /// The `schema` field: a repository path or an inline schema.
    pub schema: Value,
    pub cases: Vec<Case>,
}

impl Suite {
    /// The shipped name whose schema the suite checks (`schemas/NAME.json`); `None` for an inline
    /// schema or one of the corpus's own.
    pub fn shipped_name(&self) -> Option<&str> {
        self.schema
            .as_str()?
            .strip_prefix("schemas/")?
            .strip_suffix(".json")
    }

    pub fn load_schema(&self) -> Result<chatparse::Schema, chatparse::SchemaError> {
        match &self.schema {
            Value::String(path) => chatparse::Schema::from_path(repo_root().join(path)),
            inline => chatparse::Schema::from_value_named(
                inline.clone(),
                &format!("{} (inline)", self.name),
            ),
        }
    }
}

pub fn load_suites() -> Vec<Suite> {
    let dir = repo_root().join("tests/conformance/expected");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load_suite(p)).collect()
}

fn load_suite(path: &Path) -> Suite {
    let text = std::fs::read_to_string(path).unwrap();
    // Python's json module wrote these files; read them with its semantics (deep values included).
    let doc: Value = chatparse::runtime::py::json::loads(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let suite = doc["suite"].as_str().unwrap().to_owned();
    let cases = doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let input = match (c.get("input"), c.get("input_file")) {
                (Some(Value::String(s)), _) => s.clone(),
                (_, Some(Value::String(file))) => std::fs::read_to_string(repo_root().join(file))
                    .unwrap_or_else(|e| panic!("{file}: {e}")),
                _ => panic!("{}: case without input", path.display()),
            };
            let expect = match c["expect"].as_str().unwrap() {
                "value" => Expect::Value(c["value"].clone()),
                "error" => Expect::Error(c["error"].as_str().unwrap().to_owned()),
                "unrepresentable" => {
                    Expect::Unrepresentable(c["reason"].as_str().unwrap().to_owned())
                }
                other => panic!("unknown expectation {other}"),
            };
            Case {
                suite: suite.clone(),
                name: c["name"].as_str().unwrap().to_owned(),
                input,
                expect,
            }
        })
        .collect();
    Suite {
        name: suite,
        schema: doc["schema"].clone(),
        cases,
    }
}

fn is_python_int(n: &Number) -> bool {
    !n.to_string().contains(['.', 'e', 'E'])
}

/// Equality of JSON values as Python values: ints and floats are different kinds, floats compare
/// by value (so `1e+16` equals `1e16`, but `-0.0` differs from `0.0`), object key order matters.
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if is_python_int(x) != is_python_int(y) {
                return false;
            }
            if is_python_int(x) {
                return x.to_string() == y.to_string();
            }
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => x == y && x.is_sign_negative() == y.is_sign_negative(),
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((ka, va), (kb, vb))| ka == kb && same_value(va, vb))
        }
        _ => a == b,
    }
}

/// Short text for failure messages.
pub fn preview(s: &str) -> String {
    let mut out: String = s.chars().take(120).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    format!("{out:?}")
}

/// Literal fragments of a schema's patterns (`<|channel|>`, `<tool_call>`, …), unescaped.
pub fn delimiters(schema_text: &str) -> Vec<String> {
    let value: chatparse::Value = chatparse::value::from_str(schema_text).unwrap();
    let mut patterns = Vec::new();
    collect_patterns(&value, &mut patterns);
    let mut out = Vec::new();
    for p in patterns {
        let mut current = String::new();
        let mut chars = p.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(e) if e.is_ascii_punctuation() => current.push(e),
                    Some('n') => current.push('\n'),
                    _ => flush(&mut current, &mut out),
                },
                '(' | ')' | '?' | '*' | '+' | '[' | ']' | '{' | '}' | '^' | '$' | '.' | '|' => {
                    flush(&mut current, &mut out)
                }
                c => current.push(c),
            }
        }
        flush(&mut current, &mut out);
    }
    out.extend(
        [
            "{", "}", "[", "]", "\"", ":", ",", "1", "true", "null", "\n", " ",
        ]
        .map(String::from),
    );
    out.sort();
    out.dedup();
    out
}

fn flush(current: &mut String, out: &mut Vec<String>) {
    if current.chars().count() >= 2 {
        out.push(std::mem::take(current));
    }
    current.clear();
}

fn collect_patterns(v: &chatparse::Value, out: &mut Vec<String>) {
    match v {
        chatparse::Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    (
                        "x-regex" | "x-regex-iterator" | "x-regex-key-value",
                        chatparse::Value::String(p),
                    ) => out.push(p.clone()),
                    _ => collect_patterns(v, out),
                }
            }
        }
        chatparse::Value::Array(items) => items.iter().for_each(|v| collect_patterns(v, out)),
        _ => {}
    }
}

/// Model-output-like strings for a schema: its own delimiters and literals (so that its patterns
/// really match), JSON fragments, whitespace and random text, stitched together.
pub fn stitched_output(schema_text: &str) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let pieces = delimiters(schema_text);
    let json = prop_oneof![
        Just(r#"{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}"#.to_owned()),
        Just(r#"{"location": "Zürich", "unit": null, "ok": true, "n": -1.5e3}"#.to_owned()),
        Just("{}".to_owned()),
        Just("[1, 2, {\"a\": [\"b\"]}]".to_owned()),
        Just("\"text\"".to_owned()),
        Just("12345678901234567890123".to_owned()),
        Just("{\"broken\": ".to_owned()),
    ];
    let piece = prop_oneof![
        6 => proptest::sample::select(pieces),
        2 => json,
        2 => "[a-zA-Z0-9 _.,:=\\n-]{0,12}",
        1 => "[ \\t\\r\\n]{1,3}",
        1 => any::<String>().prop_map(|s| s.chars().take(6).collect::<String>()),
    ];
    proptest::collection::vec(piece, 0..16).prop_map(|v| v.concat())
}

/// Runs the `chatparse` binary from the repository root with `stdin` (if any) on its standard
/// input, and waits for it.
pub fn run_chatparse(args: &[&str], stdin: Option<&[u8]>) -> Output {
    // `option_env!`: test crates that never run the binary still build without the `cli` feature.
    let Some(binary) = option_env!("CARGO_BIN_EXE_chatparse") else {
        panic!("these tests run the chatparse binary: build with the `cli` feature");
    };
    let mut child = Command::new(binary)
        .args(args)
        .current_dir(repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run chatparse");
    {
        let mut pipe = child.stdin.take().expect("piped stdin");
        if let Some(bytes) = stdin {
            // The binary may exit (e.g. on a bad schema) before reading its input.
            let _ = pipe.write_all(bytes);
        }
    }
    child.wait_with_output().expect("chatparse exits")
}

/// A small seeded generator (xorshift64*), so that random chunkings reproduce.
pub struct Rng(pub u64);

impl Rng {
    /// A generator from any seed (xorshift needs a non-zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Every character boundary of `s`, 0 and `s.len()` included.
pub fn char_boundaries(s: &str) -> Vec<usize> {
    (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect()
}

/// Cuts (chunk ends) of one random chunking: chunks of 1 to `max_step` characters, `max_step`
/// drawn per chunking from 1, 2, 4, 8, 64; strictly increasing, ending at `s.len()`.
pub fn random_cuts(s: &str, rng: &mut Rng) -> Vec<usize> {
    let bounds = char_boundaries(s);
    let mut cuts = Vec::new();
    let mut i = 0;
    let max_step = [1, 2, 4, 8, 64][rng.below(5)];
    while i + 1 < bounds.len() {
        i = (i + 1 + rng.below(max_step)).min(bounds.len() - 1);
        cuts.push(bounds[i]);
    }
    cuts
}

/// An OpenAI delta stream over `spec` with the default options, no prompt or tools, and ids
/// `call_0`, `call_1`, … (deterministic, for expectations).
pub fn counter_deltas(
    spec: &chatparse::runtime::Spec,
) -> chatparse::runtime::openai::DeltaStream<'_> {
    use chatparse::runtime::openai::{CounterIds, DeltaStream, Options};
    DeltaStream::from_spec(
        spec,
        None,
        None,
        Options::default(),
        Box::new(CounterIds::default()),
    )
    .expect("a shipped spec streams")
}

//! Heap cost per tool call: allocations, peak bytes and bytes kept by the message, for several
//! formats and every way of parsing (interpreter, generated parser to `Value`, generated typed
//! parser, stream in 64-byte chunks), counted by a global allocator.
//!
//! ```sh
//! cargo run --example memory            # 10,000 calls per output
//! cargo run --example memory -- 100000  # any number of calls
//! ```
//!
//! Counts and bytes do not depend on the optimisation level, but debug assertions (on in the dev
//! profile) add checks to the streams.
//!
//! The README's "Embedding: memory" table comes from this.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let live = LIVE.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(live, Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        grew(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Relaxed);
        if new_size >= layout.size() {
            grew(new_size - layout.size());
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What one parse cost: allocations, the peak heap above the start, and what the result keeps.
struct Cost {
    allocations: usize,
    peak: usize,
    kept: usize,
}

/// Runs `f` once to warm up (lazily built matchers, caches), then measures a second run; the
/// result is dropped after its size is taken.
fn measure<T>(f: impl Fn() -> T) -> Cost {
    drop(f());
    let start = LIVE.load(Relaxed);
    PEAK.store(start, Relaxed);
    let before = ALLOCATIONS.load(Relaxed);
    let result = f();
    let kept = LIVE.load(Relaxed).saturating_sub(start);
    let cost = Cost {
        allocations: ALLOCATIONS.load(Relaxed) - before,
        peak: PEAK.load(Relaxed) - start,
        kept,
    };
    drop(result);
    cost
}

/// A model output with `n` tool calls in each family's format (as its chat template writes
/// them, from `examples/NAME/tool_calls.txt`).
fn output(name: &str, n: usize) -> String {
    let many =
        |one: &dyn Fn(usize) -> String, sep: &str| (0..n).map(one).collect::<Vec<_>>().join(sep);
    match name {
        "hermes" => format!(
            "{}<|im_end|>",
            many(
                &|i| {
                    format!("<tool_call>\n{{\"arguments\": {{\"city\": \"Wien\", \"day\": {i}}}, \"name\": \"get_weather\"}}\n</tool_call>")
                },
                "\n"
            )
        ),
        "qwen3" => format!(
            "<think>\nOne call per day.\n</think>\n\n{}<|im_end|>",
            many(
                &|i| {
                    format!("<tool_call>\n{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Wien\", \"day\": {i}}}}}\n</tool_call>")
                },
                "\n"
            )
        ),
        "gpt_oss" => format!(
            "<|channel|>analysis<|message|>One call per day.<|end|>{}",
            many(
                &|i| {
                    format!("<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{{\"city\":\"Wien\",\"day\":{i}}}<|call|>")
                },
                ""
            )
        ),
        "llama3_json" => format!(
            "<|python_tag|>{}<|eom_id|>",
            many(
                &|i| {
                    format!("{{\"name\": \"get_weather\", \"parameters\": {{\"city\": \"Wien\", \"day\": {i}}}}}")
                },
                "; "
            )
        ),
        "lfm2" => format!(
            "<|tool_call_start|>[{}]<|tool_call_end|><|im_end|>",
            many(&|i| format!("get_weather(city='Wien', day={i})"), ", ")
        ),
        "qwen3_coder" => format!(
            "{}<|im_end|>",
            many(
                &|i| {
                    format!("<tool_call>\n<function=get_weather>\n<parameter=city>\nWien\n</parameter>\n<parameter=day>\n{i}\n</parameter>\n</function>\n</tool_call>")
                },
                "\n"
            )
        ),
        _ => unreachable!("{name}"),
    }
}

const FAMILIES: &[&str] = &[
    "hermes",
    "qwen3",
    "gpt_oss",
    "llama3_json",
    "lfm2",
    "qwen3_coder",
];

/// The number of calls in a typed message's `tool_calls` (a list, possibly optional or nullable).
trait Count {
    fn count(&self) -> usize;
}

impl<T> Count for Vec<T> {
    fn count(&self) -> usize {
        self.len()
    }
}

impl<T: Count> Count for Option<T> {
    fn count(&self) -> usize {
        self.as_ref().map_or(0, Count::count)
    }
}

/// The generated typed parser (its message borrows from `text`): the number of calls, and the
/// message.
fn typed<'a>(name: &str, text: &'a str) -> (usize, Box<dyn std::fmt::Debug + 'a>) {
    use chatparse::models;
    // `parse` returns `Option<Response>` where the schema's root pattern may not match.
    macro_rules! typed {
        ($($m:ident),*; $($o:ident),*) => {
            match name {
                $(stringify!($m) => {
                    let m = models::$m::parse(text).expect("parses");
                    (m.tool_calls.count(), Box::new(m))
                })*
                $(stringify!($o) => {
                    let m = models::$o::parse(text).expect("parses").expect("matches");
                    (m.tool_calls.count(), Box::new(m))
                })*
                _ => unreachable!("{name}"),
            }
        };
    }
    typed!(gpt_oss; hermes, qwen3, llama3_json, lfm2, qwen3_coder)
}

fn calls_in(message: &chatparse::Value) -> usize {
    message["tool_calls"].as_array().map_or(0, Vec::len)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map_or(10_000, |a| a.parse().expect("a number of calls"));
    println!("{n} tool calls per output; per call: allocations, peak heap bytes, bytes kept by the result; peak ÷ input");
    println!(
        "| family | input B/call | engine | allocs/call | peak B/call | kept B/call | peak ÷ input |"
    );
    println!("| --- | ---: | --- | ---: | ---: | ---: | ---: |");
    // `memory N FAMILY ENGINE-PREFIX` measures only those (for a heap profiler).
    let family = std::env::args().nth(2);
    let only = std::env::args().nth(3).unwrap_or_default();
    for &name in FAMILIES {
        if family.as_deref().is_some_and(|f| f != name) {
            continue;
        }
        let text = output(name, n);
        let per = |x: usize| x as f64 / n as f64;
        let input = per(text.len());
        let schema = chatparse::shipped::schema(name).expect("a shipped name");
        let spec = chatparse::shipped::spec(name)
            .expect("a shipped name")
            .expect("loads");
        let generated = chatparse::models::parse_value_fn(name).expect("a generated parser");
        let want = |engine: &str| engine.starts_with(only.as_str());
        let mut rows: Vec<(&str, Cost)> = Vec::new();
        if want("interpreter") {
            rows.push((
                "interpreter",
                measure(|| {
                    let m = schema.parse(&text).expect("parses");
                    assert_eq!(calls_in(&m), n, "{name}");
                    m
                }),
            ));
        }
        if want("generated → Value") {
            rows.push((
                "generated → Value",
                measure(|| {
                    let m = generated(&text).expect("parses");
                    assert_eq!(calls_in(&m), n, "{name}");
                    m
                }),
            ));
        }
        if want("generated, typed") {
            rows.push((
                "generated, typed",
                measure(|| {
                    let (calls, message) = typed(name, &text);
                    assert_eq!(calls, n, "{name}");
                    message
                }),
            ));
        }
        if want("stream") {
            rows.push((
                "stream (64 B chunks)",
                measure(|| {
                    let mut stream = spec.stream(None, None).expect("streams");
                    let mut at = 0;
                    while at < text.len() {
                        let mut end = (at + 64).min(text.len());
                        while !text.is_char_boundary(end) {
                            end += 1;
                        }
                        stream
                            .feed_with(&text[at..end], &mut |_| {})
                            .expect("feeds");
                        at = end;
                    }
                    let m = stream.finish_with(&mut |_| {}).expect("finishes");
                    assert_eq!(calls_in(&m), n, "{name}");
                    m
                }),
            ));
        }
        for (engine, cost) in rows {
            println!(
                "| {name} | {input:.0} | {engine} | {:.1} | {:.0} | {:.0} | {:.1} |",
                per(cost.allocations),
                per(cost.peak),
                per(cost.kept),
                cost.peak as f64 / text.len() as f64
            );
        }
    }
}

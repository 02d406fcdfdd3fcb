//! Heap allocations per parse, counted by a global allocator: a generated parser whose message
//! borrows every field from the input allocates nothing; one with tool calls allocates a fixed
//! number of times, whatever the length of the text around them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    // Per thread: the test harness runs tests in parallel.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by one call of `f` (run once before, so that lazily compiled matchers and
/// engine caches are in place, as they are in a server after its first request).
fn allocations_of(f: impl Fn()) -> usize {
    f();
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

const REASONING: &str = "The user wants a short answer; no tool is needed. ";

fn gpt_oss_answer(reasoning_repeats: usize) -> String {
    format!(
        "<|channel|>analysis<|message|>{}<|end|><|start|>assistant<|channel|>final<|message|>Paris.<|return|>",
        REASONING.repeat(reasoning_repeats)
    )
}

fn gpt_oss_tool_call(reasoning_repeats: usize) -> String {
    format!(
        "<|channel|>analysis<|message|>{}<|end|><|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{{\"city\": \"Paris\", \"days\": 3}}<|call|>",
        REASONING.repeat(reasoning_repeats)
    )
}

#[test]
fn borrowed_message_allocates_nothing() {
    use chatparse::models::gpt_oss;
    for repeats in [1, 1_000] {
        let text = gpt_oss_answer(repeats);
        let n = allocations_of(|| {
            let message = gpt_oss::parse(&text).expect("parses");
            assert_eq!(message.content, Some("Paris."));
            assert!(message
                .thinking
                .is_some_and(|t| t.len() >= REASONING.len() * repeats - 1));
            assert!(message
                .tool_calls
                .as_ref()
                .is_none_or(|calls| calls.is_empty()));
        });
        assert_eq!(n, 0, "reasoning repeated {repeats} times");
    }
}

/// The count for a message with one tool call (the arguments are parsed into a JSON map, which
/// allocates); it is the README's number and must not depend on the reasoning's length.
#[test]
fn tool_call_allocations_do_not_grow_with_input() {
    use chatparse::models::gpt_oss;
    let count = |repeats: usize| {
        let text = gpt_oss_tool_call(repeats);
        allocations_of(|| {
            let message = gpt_oss::parse(&text).expect("parses");
            let calls = message.tool_calls.expect("tool calls");
            assert_eq!(calls.len(), 1);
            let function = calls[0].function.as_ref().expect("function");
            assert_eq!(function.name, Some("get_weather"));
        })
    };
    let short = count(1);
    let long = count(2_000);
    println!("gpt_oss message with one tool call: {short} allocations");
    assert_eq!(short, long);
    assert!(short <= 9, "{short} allocations for one tool call");
}

/// Allocations per tool call of the interpreter and the generated parser on hermes (README
/// "Embedding: memory": 18 each; 46 and 29 before objects were reshaped in place and the
/// wrapping transform moved the call instead of copying it). The JSON of a two-argument call
/// alone makes 11 (two maps of two allocations, four keys, three strings).
#[test]
fn tool_call_allocations_per_call() {
    let schema = chatparse::shipped::schema("hermes").expect("shipped");
    let output = |n: usize| {
        (0..n)
            .map(|i| {
                format!(
                    "<tool_call>\n{{\"arguments\": {{\"city\": \"Wien\", \"day\": {i}}}, \"name\": \"get_weather\"}}\n</tool_call>"
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let interpreted = |n: usize| {
        let text = output(n);
        allocations_of(|| {
            let message = schema.parse(&text).expect("parses");
            assert_eq!(message["tool_calls"].as_array().map(Vec::len), Some(n));
        })
    };
    let generated = |n: usize| {
        let text = output(n);
        allocations_of(|| {
            let message = chatparse::models::hermes::parse(&text)
                .expect("parses")
                .expect("matches");
            assert_eq!(message.tool_calls.flatten().map(|c| c.len()), Some(n));
        })
    };
    // The difference cancels what does not depend on the number of calls; the list's growth
    // adds one reallocation per doubling.
    let interpreter = (interpreted(200) - interpreted(100)) / 100;
    let typed = (generated(200) - generated(100)) / 100;
    println!("hermes: {interpreter} allocations per call interpreted, {typed} generated");
    assert!(interpreter <= 18, "{interpreter} allocations per call");
    assert!(typed <= 18, "{typed} allocations per call");
}

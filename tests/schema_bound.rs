//! Schema-load bounds (issue 21 item 4: a 100,000-property schema took 1.6 GB to load): at most
//! `MAX_SCHEMA_NODES` nodes and `MAX_SCHEMA_BYTES` of text, refused with the file, the JSON
//! pointer and the fix; and what loading costs per node, counted by a global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use chatparse::runtime::schema::{MAX_SCHEMA_BYTES, MAX_SCHEMA_NODES};
use chatparse::Schema;

struct Counting;

thread_local! {
    // Per thread: the harness runs tests in parallel.
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(delta: isize) {
    let _ = LIVE.try_with(|live| {
        live.set(live.get() + delta);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(live.get())));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The peak heap above the start while `f` runs (on this thread).
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let out = f();
    (out, (PEAK.with(Cell::get) - start).max(0) as usize)
}

/// An object schema with `n` string properties `p0`, `p1`, …
fn properties(n: usize) -> String {
    let props: Vec<String> = (0..n)
        .map(|i| format!(r#""p{i}": {{"type": "string"}}"#))
        .collect();
    format!(
        r#"{{"type": "object", "properties": {{{}}}}}"#,
        props.join(", ")
    )
}

#[test]
fn a_schema_with_more_nodes_than_the_limit_is_refused_with_file_pointer_and_fix() {
    assert_eq!(MAX_SCHEMA_NODES, 10_000);
    // The root and MAX - 1 properties: exactly the limit.
    assert!(Schema::from_json_str(&properties(MAX_SCHEMA_NODES - 1)).is_ok());
    let path = std::env::temp_dir().join(format!("chatparse-nodes-{}.json", std::process::id()));
    std::fs::write(&path, properties(MAX_SCHEMA_NODES)).unwrap();
    let e = Schema::from_path(&path).unwrap_err();
    // The loader `response_parser!` and the CLI use says the same.
    let spec_error = chatparse::runtime::Spec::from_path(&path).unwrap_err();
    assert_eq!(spec_error.to_string(), e.to_string());
    std::fs::remove_file(&path).unwrap();
    assert_eq!(e.problems.len(), 1, "{e}");
    // The root is node 1, `p{i}` node i + 2: the first past the limit is the last property.
    assert_eq!(
        e.problems[0].pointer,
        format!("/properties/p{}", MAX_SCHEMA_NODES - 1)
    );
    assert!(
        e.problems[0].fix.contains(r#""additionalProperties": {}"#),
        "{e}"
    );
    let shown = e.to_string();
    assert!(shown.contains(&path.display().to_string()), "{shown}");
    assert!(shown.contains("more than 10000 nodes"), "{shown}");
}

#[test]
fn schema_text_longer_than_the_limit_is_refused_before_parsing() {
    let text = format!(
        r#"{{"type": "object", "description": "{}"}}"#,
        "x".repeat(MAX_SCHEMA_BYTES)
    );
    let (result, peak) = peak_of(|| Schema::from_json_str_named(&text, "big.json"));
    let e = result.unwrap_err();
    assert_eq!(e.problems[0].pointer, "");
    assert!(e.to_string().contains("big.json"));
    let e = chatparse::runtime::Spec::from_json_str_named(&text, "big.json").unwrap_err();
    assert!(e.to_string().contains("more than the 8388608"), "{e}");
    // Refused without reading the document.
    assert!(peak < 64 << 10, "{peak} bytes");
}

/// What loading costs per node at its peak (the JSON document included): about 1 KB for plain
/// properties (4.0 KB before the node's three optional compiled patterns, about 1 KB each, were
/// boxed), and about 1 KB more per compiled pattern.
#[test]
fn loading_costs_about_a_kilobyte_per_plain_node() {
    let text = properties(MAX_SCHEMA_NODES - 1);
    let (schema, peak) = peak_of(|| Schema::from_json_str(&text).unwrap());
    let per_node = peak / MAX_SCHEMA_NODES;
    eprintln!("{per_node} bytes per node at the peak of loading");
    assert!(per_node < 1536, "{per_node} bytes per node");
    drop(schema);
}

//! Whether streaming one long tool call stays linear in its length (issue 21: no input runs
//! longer than linear time), for every shipped name, through the plain stream and the OpenAI
//! delta adapter.
//!
//! Each name's `examples/NAME/tool_call.txt` gets the first string value of its call's
//! arguments (as the one-shot parse reads it) made long — `LONG=values`, the default: the value
//! followed by N words — or, for the families whose parameters are written one by one
//! (`LONG=parameters`: qwen3_coder's XML, lfm2's pythonic call, gemma4's dialect), N more
//! parameters. The text is fed in 16-byte chunks (`CHUNK=n`), then finished; the times for N
//! and 4N are printed with their ratio: about 4 is linear, about 16 quadratic. `TEMPLATES=1`
//! does the same for the response templates' tool-call cases of the streaming corpus.
//!
//! ```text
//! cargo run --release --example long_call              # every shipped name
//! cargo run --release --example long_call -- lfm2      # one
//! LONG=parameters cargo run --release --example long_call
//! LONG=white cargo run --release --example long_call
//! ```
//!
//! `LONG=white` looks for white space that a scan reads again on every chunk: for every example
//! of every name (`examples/NAME/*.txt`; `TEMPLATES=1`: every case of the three templates'
//! streaming corpora), a run of spaces and one of newlines is put at every character boundary in
//! turn (after a `}`, before a `)`, between calls, inside an end marker, in content, in
//! reasoning: wherever the example has them; a case longer than 400 characters at about 400 of
//! them, evenly spaced), and the run is streamed at `SWEEP` bytes
//! (default 4000) and 4× that. Each name's worst spot, plain and through the adapter, is then
//! timed at `N` × 15 bytes and 4× that (`N=4000`: 60 KB and 240 KB) and printed with the ratios;
//! spots whose small ratio is above 7 are listed too (`SHOW=all`: every spot's). `SPOT=EXAMPLE@BYTE@s`
//! (`@n`: line breaks) times one spot only (`EXAMPLE` is the file's stem, `BYTE` where the run
//! goes), as printed after the example's name.
//!
//! BENCHMARKS.md ("Long calls") has the results.
use chatparse::runtime::openai::{CounterIds, DeltaStream, Options};
use chatparse::runtime::stream::ResponseTemplate;
use chatparse::runtime::Spec;
use chatparse::Value;
use std::time::{Duration, Instant};

#[path = "../benches/support/mod.rs"]
mod support;

/// Streams `text` in `chunk`-byte pieces, then finishes: the time taken, and whether the stream
/// succeeded (a strict stream may refuse an inflated example).
fn plain(spec: &Spec, case: &Case, text: &str, chunk: usize) -> (Duration, bool) {
    let start = Instant::now();
    let Ok(mut stream) = spec.stream(case.prefix.as_deref(), case.tools.as_deref()) else {
        return (start.elapsed(), false);
    };
    let mut ok = true;
    for piece in support::chunks(text, chunk) {
        ok &= stream.feed_with(piece, &mut |_| {}).is_ok();
    }
    ok &= stream.finish_with(&mut |_| {}).is_ok();
    (start.elapsed(), ok)
}

/// The same through the OpenAI delta adapter.
fn deltas(spec: &Spec, case: &Case, text: &str, chunk: usize) -> (Duration, bool) {
    let start = Instant::now();
    let ids = Box::new(CounterIds::default());
    let (prefix, tools) = (case.prefix.as_deref(), case.tools.as_deref());
    let Ok(mut stream) = DeltaStream::from_spec(spec, prefix, tools, Options::default(), ids)
    else {
        return (start.elapsed(), false);
    };
    let mut ok = true;
    for piece in support::chunks(text, chunk) {
        ok &= stream.feed_with(piece, &mut |_| {}).is_ok();
    }
    ok &= stream.finish().is_ok();
    (start.elapsed(), ok)
}

/// The example with its call made long, or `None` when the call's first string value is not
/// written as is in the text.
fn inflate(spec: &Spec, case: &Case, name: &str, n: usize, parameters: bool) -> Option<String> {
    let example = case.text.as_str();
    if parameters {
        let extra: Vec<String> = (0..n)
            .map(|i| many_parameter(name, i))
            .collect::<Option<_>>()?;
        let (anchor, joiner) = parameter_anchor(name)?;
        let at = example.find(anchor)?;
        return Some(format!(
            "{}{}{}",
            &example[..at],
            extra.join(joiner),
            &example[at..]
        ));
    }
    let message = match &case.prefix {
        Some(prefix) => spec.parse_with_prefix(example, prefix).ok()?,
        None => spec.parse(example).ok()?,
    };
    let arguments = message["tool_calls"][0]["function"]["arguments"].as_object()?;
    let value = arguments.values().find_map(|v| v.as_str())?;
    if value.len() < 3 {
        return None;
    }
    let at = example.find(value)? + value.len();
    let filler = if std::env::var("LONG").is_ok_and(|l| l == "spaces") {
        "               "
    } else {
        " and more words"
    };
    let words = filler.repeat(n);
    Some(format!("{}{words}{}", &example[..at], &example[at..]))
}

/// Where the extra parameters go (before the example's first parameter), and what joins them.
fn parameter_anchor(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "qwen3_coder" => Some(("<parameter=path>", "")),
        "lfm2" => Some(("candidate_id=", "")),
        "gemma4" => Some(("location:", "")),
        _ => None,
    }
}

fn many_parameter(name: &str, i: usize) -> Option<String> {
    match name {
        "qwen3_coder" => Some(format!("<parameter=k{i}>\nv{i}\n</parameter>\n")),
        "lfm2" => Some(format!("k{i}='v{i}', ")),
        "gemma4" => Some(format!("k{i}:<|\"|>v{i}<|\"|>,")),
        _ => None,
    }
}

/// An example to grow: its text, and the prompt's end and the tools a template stream is given.
struct Case {
    text: String,
    prefix: Option<String>,
    tools: Option<Vec<Value>>,
}

/// The shipped names' tool-call examples, or (`TEMPLATES=1`) the response templates' tool-call
/// cases of the streaming corpus (`tests/streaming/expected/NAME.json`), as `(name, spec, case)`.
fn cases() -> Vec<(String, Spec, Case)> {
    all_cases()
        .into_iter()
        .filter_map(|(name, spec, cases)| {
            let (_, case) = cases
                .into_iter()
                .find(|(example, _)| example == "tool_call")?;
            Some((name, spec, case))
        })
        .collect()
}

/// An example's name (its file stem, or its case's name) and the example.
type Named = (String, Case);

/// A stream over one text: its time, and whether it succeeded.
type Run<'a> = &'a dyn Fn(&str) -> (Duration, bool);

/// Every example of every shipped name (or, `TEMPLATES=1`, every case of the templates'
/// streaming corpora), as `(name, spec, [(example, case)])`.
fn all_cases() -> Vec<(String, Spec, Vec<Named>)> {
    if std::env::var("TEMPLATES").is_ok_and(|t| t == "1") {
        return ["gemma4", "qwen3", "qwen3_5"]
            .into_iter()
            .map(|name| {
                let text = std::fs::read_to_string(format!("response_templates/{name}.json"))
                    .expect("a template");
                let spec = Spec::from(ResponseTemplate::from_json_str(&text).expect("loads"));
                let doc: Value = chatparse::value::from_str(
                    &std::fs::read_to_string(format!("tests/streaming/expected/{name}.json"))
                        .expect("its cases"),
                )
                .expect("JSON");
                let cases = doc["cases"]
                    .as_array()
                    .expect("cases")
                    .iter()
                    .filter_map(|case| {
                        let case_name = case["name"].as_str()?.to_owned();
                        let case = Case {
                            text: case["input"].as_str()?.to_owned(),
                            prefix: case["prefix"].as_str().map(str::to_owned),
                            tools: case["tools"].as_array().cloned(),
                        };
                        Some((case_name, case))
                    })
                    .collect();
                (name.to_owned(), spec, cases)
            })
            .collect();
    }
    chatparse::shipped::names()
        .map(|name| {
            let spec = chatparse::shipped::spec(name)
                .expect("shipped")
                .expect("loads");
            let mut files: Vec<_> = std::fs::read_dir(format!("examples/{name}"))
                .expect("examples")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "txt"))
                .collect();
            files.sort();
            let cases = files
                .into_iter()
                .map(|path| {
                    let case = Case {
                        text: std::fs::read_to_string(&path).expect("an example"),
                        prefix: None,
                        tools: None,
                    };
                    let stem = path.file_stem().expect("a name").to_string_lossy();
                    (stem.into_owned(), case)
                })
                .collect();
            (name.to_owned(), spec, cases)
        })
        .collect()
}

/// One spot of a white-space sweep: the example, where the run goes, and of what.
struct Spot<'c> {
    example: &'c str,
    case: &'c Case,
    at: usize,
    filler: &'static str,
}

impl Spot<'_> {
    /// The example with `bytes` of the filler at the spot.
    fn text(&self, bytes: usize) -> String {
        let text = &self.case.text;
        let run = self.filler.repeat(bytes / self.filler.len());
        format!("{}{run}{}", &text[..self.at], &text[self.at..])
    }

    /// A few characters either side of the spot, `|` where the run goes.
    fn context(&self) -> String {
        let text = &self.case.text;
        let before: String = text[..self.at].chars().rev().take(12).collect();
        let before: String = before.chars().rev().collect();
        let after: String = text[self.at..].chars().take(12).collect();
        format!(
            "{}@{}: {before:?}|{after:?} ({:?})",
            self.example, self.at, self.filler
        )
    }
}

/// `LONG=white`: see the module documentation.
fn white(only: Option<&str>, chunk: usize, n: usize) {
    let sweep: usize = std::env::var("SWEEP")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(4000);
    let show_all = std::env::var("SHOW").is_ok_and(|s| s == "all");
    let once = |run: &dyn Fn(&str) -> (Duration, bool), text: &str| {
        (0..2).map(|_| run(text).0).min().expect("two runs")
    };
    let ratio = |a: Duration, b: Duration| b.as_secs_f64() / a.as_secs_f64().max(1e-9);
    println!(
        "name | worst spot | bytes N / 4N | plain N, 4N (ratio) | deltas N, 4N (ratio) | one-shot N, 4N (ratio)"
    );
    for (name, spec, cases) in all_cases() {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        // (ratio, spot) of the worst spot, plain and through the adapter.
        let mut worst: [Option<(f64, Spot)>; 2] = [None, None];
        // `SPOT=EXAMPLE@BYTE@s` (or `@n`): that spot only, spaces (line breaks), timed as a
        // worst one is.
        if let Ok(spot) = std::env::var("SPOT") {
            let mut parts = spot.split('@');
            let (Some(example), Some(at), Some(filler)) =
                (parts.next(), parts.next(), parts.next())
            else {
                panic!("SPOT=EXAMPLE@BYTE@s|n");
            };
            let at: usize = at.parse().expect("a byte offset");
            let filler = if filler == "n" { "\n" } else { " " };
            if let Some((example, case)) = cases.iter().find(|(e, _)| e == example) {
                for slot in &mut worst {
                    *slot = Some((
                        0.0,
                        Spot {
                            example,
                            case,
                            at,
                            filler,
                        },
                    ));
                }
            }
        }
        let sweep_all = worst[0].is_none();
        for (example, case) in cases.iter().filter(|_| sweep_all) {
            // A long case (the templates' corpora have a few) is sampled at about 400 spots.
            let step = case.text.len() / 400 + 1;
            let spots = (0..=case.text.len())
                .filter(|&i| case.text.is_char_boundary(i))
                .enumerate()
                .filter(|(k, _)| k % step == 0)
                .map(|(_, i)| i);
            for at in spots {
                for filler in [" ", "\n"] {
                    let spot = Spot {
                        example,
                        case,
                        at,
                        filler,
                    };
                    let (small, large) = (spot.text(sweep), spot.text(4 * sweep));
                    let runs: [Run; 2] = [&|t| plain(&spec, case, t, chunk), &|t| {
                        deltas(&spec, case, t, chunk)
                    }];
                    for (which, run) in runs.into_iter().enumerate() {
                        let r = ratio(once(run, &small), once(run, &large));
                        if show_all || r > 7.0 {
                            let kind = ["plain", "deltas"][which];
                            println!("  {name} {kind} {:.1}: {}", r, spot.context());
                        }
                        if worst[which].as_ref().is_none_or(|(w, _)| r > *w) {
                            worst[which] = Some((
                                r,
                                Spot {
                                    example,
                                    case,
                                    at,
                                    filler,
                                },
                            ));
                        }
                    }
                }
            }
        }
        for (which, found) in worst.iter().enumerate() {
            let Some((_, spot)) = found else { continue };
            let (small, large) = (spot.text(15 * n), spot.text(60 * n));
            let best = |run: &dyn Fn(&str) -> (Duration, bool), text: &str| {
                run(text);
                (0..3).map(|_| run(text).0).min().expect("three runs")
            };
            let p = |t: &str| plain(&spec, spot.case, t, chunk);
            let d = |t: &str| deltas(&spec, spot.case, t, chunk);
            let (p1, p4) = (best(&p, &small), best(&p, &large));
            let (d1, d4) = (best(&d, &small), best(&d, &large));
            // The one-shot parse of the same text: a schema whose own patterns take quadratic
            // time on the run (a lazy `.*?` before `\s*`) makes every stream's finish so too.
            let o = |t: &str| {
                let start = Instant::now();
                let ok = match &spot.case.prefix {
                    Some(prefix) => spec.parse_with_prefix(t, prefix).is_ok(),
                    None => spec.parse(t).is_ok(),
                };
                (start.elapsed(), ok)
            };
            let (o1, o4) = (best(&o, &small), best(&o, &large));
            println!(
                "{name} ({}) | {} | {} / {} | {p1:.1?}, {p4:.1?} ({:.1}) | {d1:.1?}, {d4:.1?} ({:.1}) | {o1:.1?}, {o4:.1?} ({:.1})",
                ["plain's", "deltas'"][which],
                spot.context(),
                small.len(),
                large.len(),
                ratio(p1, p4),
                ratio(d1, d4),
                ratio(o1, o4),
            );
        }
    }
}

fn main() {
    let only = std::env::args().nth(1);
    if std::env::var("LONG").is_ok_and(|l| l == "white") {
        let chunk = std::env::var("CHUNK")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(16);
        let n = std::env::var("N")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(4000);
        white(only.as_deref(), chunk, n);
        return;
    }
    let parameters = std::env::var("LONG").is_ok_and(|l| l == "parameters");
    let chunk: usize = std::env::var("CHUNK")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(16);
    let n: usize = std::env::var("N")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(1000);
    println!("name | bytes N / 4N | plain N, 4N (ratio) | deltas N, 4N (ratio)");
    for (name, spec, case) in cases() {
        let name = name.as_str();
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let (Some(small), Some(large)) = (
            inflate(&spec, &case, name, n, parameters),
            inflate(&spec, &case, name, 4 * n, parameters),
        ) else {
            continue;
        };
        // The fastest of three runs, after one that compiles the patterns used.
        let best = |run: &dyn Fn(&str) -> (Duration, bool), text: &str| {
            run(text);
            (0..3)
                .map(|_| run(text))
                .min_by_key(|(time, _)| *time)
                .expect("three runs")
        };
        let (p1, ok1) = best(&|t| plain(&spec, &case, t, chunk), &small);
        let (p4, ok4) = best(&|t| plain(&spec, &case, t, chunk), &large);
        let (d1, dok1) = best(&|t| deltas(&spec, &case, t, chunk), &small);
        let (d4, dok4) = best(&|t| deltas(&spec, &case, t, chunk), &large);
        let ok = |a: bool, b: bool| if a && b { "" } else { " (refused)" };
        println!(
            "{name} | {} / {} | {:.1?}, {:.1?} ({:.1}){} | {:.1?}, {:.1?} ({:.1}){}",
            small.len(),
            large.len(),
            p1,
            p4,
            p4.as_secs_f64() / p1.as_secs_f64(),
            ok(ok1, ok4),
            d1,
            d4,
            d4.as_secs_f64() / d1.as_secs_f64(),
            ok(dok1, dok4),
        );
    }
}

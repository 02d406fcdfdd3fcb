//! Wall time of [`chatparse_jinja::derive::derive`] on every chat template in a directory:
//! each template derived `REPS` times (default 5), the median printed in milliseconds, with the
//! derivation's verdict (a path that is a file: that template alone). A measure of the
//! renderings' cost, which is most of a derivation's. Wall times move with the machine's load;
//! for counts that do not, run one template once under `perf stat -e instructions:u`:
//!
//! ```sh
//! cargo run --release -p chatparse-jinja --example derive_cost -- ../shared/chat_templates
//! REPS=1 perf stat -e instructions:u target/release/examples/derive_cost TEMPLATE.jinja
//! ```

use std::time::Instant;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/chat_templates".into());
    let reps: usize = std::env::var("REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let mut paths: Vec<_> = if std::path::Path::new(&dir).is_file() {
        vec![dir.into()]
    } else {
        std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jinja"))
            .collect()
    };
    paths.sort();
    let mut total = 0.0;
    for path in paths {
        let source = std::fs::read_to_string(&path).unwrap_or_default();
        let mut times = Vec::with_capacity(reps);
        let mut verdict = String::new();
        for _ in 0..reps {
            let start = Instant::now();
            let derived = chatparse_jinja::derive::derive(&source);
            times.push(start.elapsed().as_secs_f64() * 1e3);
            verdict = match derived {
                Ok(d) => format!("{:?}", d.class),
                Err(e) => format!("error: {}", e.reason.chars().take(60).collect::<String>()),
            };
        }
        times.sort_by(f64::total_cmp);
        let median = times[reps / 2];
        total += median;
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        println!("{median:8.2} ms  {name}  {verdict}");
    }
    println!("{total:8.2} ms  in all");
}

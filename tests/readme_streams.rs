//! The README's chunk streams (issue 16: "README snapshots of a full chunk stream"): every
//! console example of the form `(printf '…'; sleep …; printf '…') | chatparse stream --schema NAME
//! --openai --call-ids counter` must print exactly what the adapter sends for those pieces, so the
//! README cannot drift from the code. (`chatparse stream` prints the chunks of each read as it
//! arrives; the `sleep`s make each `printf` one read.)

mod support;

use support::{counter_deltas, repo_root};

/// A console example: the shipped name, the pieces written, the lines printed.
struct Example {
    schema: String,
    pieces: Vec<String>,
    lines: Vec<String>,
}

/// The text of a `printf '…'` argument as printf writes it (the README uses `\n` and `\\`).
fn printf_text(quoted: &str) -> String {
    let mut out = String::new();
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

fn examples(readme: &str) -> Vec<Example> {
    let mut found = Vec::new();
    let lines: Vec<&str> = readme.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(command) = line.strip_prefix("$ (printf '") else {
            continue;
        };
        // The pipeline may continue on the next line after a `\`.
        let next = lines.get(i + 1).copied().unwrap_or_default();
        let (command, output_from) = match command.strip_suffix(" \\") {
            Some(head) => (format!("{head} {}", next.trim()), i + 2),
            None => (command.to_owned(), i + 1),
        };
        let Some((writes, cli)) = command.split_once(") | chatparse stream ") else {
            continue;
        };
        if !cli.contains("--openai") || cli.contains("--prefix") {
            continue;
        }
        assert!(cli.contains("--call-ids counter"), "{cli}");
        let schema = cli
            .split_whitespace()
            .skip_while(|w| *w != "--schema")
            .nth(1)
            .unwrap()
            .to_owned();
        let pieces = format!("printf '{writes}")
            .split("; ")
            .filter_map(|part| part.strip_prefix("printf '")?.strip_suffix('\''))
            .map(printf_text)
            .collect();
        let lines = lines[output_from..]
            .iter()
            .take_while(|l| l.starts_with('{'))
            .map(|l| l.to_string())
            .collect();
        found.push(Example {
            schema,
            pieces,
            lines,
        });
    }
    found
}

#[test]
fn readme_chunk_streams_are_what_the_adapter_sends() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let examples = examples(&readme);
    let schemas: Vec<&str> = examples.iter().map(|e| e.schema.as_str()).collect();
    // One JSON format and one XML-parameter format at least.
    assert!(
        schemas.contains(&"hermes") && schemas.contains(&"qwen3_5"),
        "{schemas:?}"
    );
    for example in &examples {
        let spec = chatparse::shipped::spec(&example.schema).unwrap().unwrap();
        let mut stream = counter_deltas(&spec);
        let mut chunks = Vec::new();
        for piece in &example.pieces {
            chunks.extend(stream.feed(piece).unwrap());
        }
        chunks.extend(stream.finish().unwrap().0);
        let got: Vec<String> = chunks.iter().map(|c| c.to_string()).collect();
        assert_eq!(got, example.lines, "README example of {}", example.schema);
    }
}

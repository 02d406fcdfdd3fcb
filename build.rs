//! Embeds every `schemas/*.json` in the library, so the shipped-schema list is always the
//! directory's content and editing a schema rebuilds the crate; with the `models` feature, also
//! a `response_parser!` per shipped schema (`chatparse::models`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    shipped_schemas(root);
    if std::env::var_os("CARGO_FEATURE_MODELS").is_some() {
        generated_models(root);
    }
}

fn out_dir() -> PathBuf {
    PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
}

/// `(stem, path)` of every `*.json` file in `dir`, sorted by stem.
fn json_files(dir: &Path) -> Vec<(String, String)> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<(String, String)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .filter_map(|p| {
                    let stem = p.file_stem()?.to_str()?.to_owned();
                    Some((stem, p.display().to_string()))
                })
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    entries
}

fn shipped_schemas(root: &Path) {
    let entries = json_files(&root.join("schemas"));
    let mut out = String::from("/// Every shipped schema: (name, JSON text), sorted by name.\n");
    out.push_str("pub const SHIPPED: &[(&str, &str)] = &[\n");
    for (name, path) in &entries {
        println!("cargo:rerun-if-changed={path}");
        let _ = writeln!(out, "    ({name:?}, include_str!({path:?})),");
    }
    out.push_str("];\n");
    let profiles = json_files(&root.join("schemas/streaming"));
    out.push_str(
        "/// Every shipped stream profile (`schemas/streaming/`): (name, JSON text), sorted.\n",
    );
    out.push_str("pub const STREAM_PROFILES: &[(&str, &str)] = &[\n");
    for (name, path) in &profiles {
        println!("cargo:rerun-if-changed={path}");
        let _ = writeln!(out, "    ({name:?}, include_str!({path:?})),");
    }
    out.push_str("];\n");
    std::fs::write(out_dir().join("shipped.rs"), out).expect("OUT_DIR is writable");
}

/// The shipped schemas with a completeness check (`chatparse_runtime::schema::Check`; a test
/// checks that the lists agree), and whether their root is nullable (a root regex: `parse`
/// returns an `Option`).
const CHECKED: &[(&str, bool, &str)] = &[
    ("apriel", true, "Apriel"),
    ("cohere_command_r7b", false, "CohereCommandR7b"),
    ("llama3_json", true, "Llama3Json"),
    ("mistral_nemo", true, "MistralJsonList"),
    ("mistral_small_3_1", true, "MistralJsonList"),
    ("nemotron_nano_v2", true, "NemotronNanoV2"),
    ("deepseek_r1", true, "CallGaps"),
    ("deepseek_v3_1", true, "CallGaps"),
    ("deepseek_v3_2", true, "CallGaps"),
    ("ernie4_5", true, "CallGaps"),
    ("functionary_v3_1", true, "CallGaps"),
    ("functionary_v3_2", true, "FunctionaryV3_2"),
    ("gemma4", true, "CallGaps"),
    ("glm4_5", true, "CallGaps"),
    ("hermes", true, "CallGaps"),
    ("kimi_k2", true, "CallGaps"),
    ("minimax_m2", true, "CallGaps"),
    ("mistral_small", true, "CallGaps"),
    ("qwen3", true, "CallGaps"),
    ("qwen3_5", true, "CallGaps"),
    ("qwen3_coder", true, "CallGaps"),
    ("seed_oss", true, "CallGaps"),
    ("smollm3", true, "CallGaps"),
    ("lfm2", true, "Lfm2"),
    ("gpt_oss", false, "GptOss"),
];

/// `models.rs`: a `response_parser!` module per shipped schema, and the table the CLI's generated
/// engine dispatches on. A family with a completeness check gets the schema's parser as
/// `NAME::schema_only` and `NAME::parse`/`NAME::parse_value` that run the check after it.
fn generated_models(root: &Path) {
    let entries = json_files(&root.join("schemas"));
    let mut out = String::new();
    for (name, _) in &entries {
        let Some((_, nullable, variant)) = CHECKED.iter().find(|(n, _, _)| n == name) else {
            let _ = writeln!(
                out,
                "crate::response_parser!(pub mod {name} = \"schemas/{name}.json\");"
            );
            continue;
        };
        let (ret, wrap) = if *nullable {
            ("Option<Response<'a>>", "Some(message)")
        } else {
            ("Response<'a>", "message")
        };
        let _ = writeln!(
            out,
            "/// The generated parser of `schemas/{name}.json` with the family's completeness check \
             above it (`chatparse::runtime::schema::Check`): `parse` and `parse_value` fail where the \
             schema's message would leave out a part of the output; `schema_only` is the schema's \
             own parser, the reference's behaviour.
pub mod {name} {{
    crate::response_parser!(pub mod schema_only = \"schemas/{name}.json\");
    pub use schema_only::*;
    use crate::runtime::schema::Check;
    /// The family's completeness check.
    pub const CHECK: Check = Check::{variant};
    /// Whether the check understands every marker-free answer (known when this is compiled:
    /// then the marker-free path skips it).
    const MARKER_FREE_UNDERSTOOD: bool = CHECK.understands_marker_free_answers_after(
        schema_only::MARKER_FREE_HEAD,
        schema_only::MARKER_FREE_LITERALS,
    );
    /// The schema the check reads its patterns from.
    static CHECKED_SCHEMA: std::sync::LazyLock<crate::Schema> = std::sync::LazyLock::new(|| {{
        crate::Schema::from_json_str(SCHEMA).expect(\"a shipped schema is valid\")
    }});
    /// [`schema_only::parse`], then the family's completeness check.
    /// The check decides from what the parse read where it can (`Check::verify_parse`), and
    /// knows its verdict on the marker-free answer (`Check::verify_marker_free`).
    pub fn parse<'a>(text: &'a str) -> Result<{ret}, crate::ParseError> {{
        if let Some(message) = schema_only::parse_marker_free(text) {{
            if !MARKER_FREE_UNDERSTOOD {{
                CHECK.verify_marker_free(&CHECKED_SCHEMA, text)?;
            }}
            return Ok({wrap});
        }}
        CHECK.verify_parse(&CHECKED_SCHEMA, text, || schema_only::parse_patterns(text))
    }}
    /// [`schema_only::parse_value`], then the family's completeness check.
    pub fn parse_value(text: &str) -> Result<crate::Value, crate::ParseError> {{
        if let Some(message) = schema_only::parse_marker_free(text) {{
            if !MARKER_FREE_UNDERSTOOD {{
                CHECK.verify_marker_free(&CHECKED_SCHEMA, text)?;
            }}
            return Ok(message.to_value());
        }}
        CHECK.verify_parse(&CHECKED_SCHEMA, text, || schema_only::parse_value_patterns(text))
    }}
}}"
        );
    }
    out.push_str(
        "/// Every shipped schema's generated parser as (name, parse to JSON), sorted by name: what \
         the name parses to (with the family's completeness check, where it has one).\n",
    );
    out.push_str("pub const GENERATED: &[(&str, ParseToJson)] = &[\n");
    for (name, _) in &entries {
        let _ = writeln!(out, "    ({name:?}, {name}::parse_value),");
    }
    out.push_str("];\n");
    out.push_str(
        "/// Every shipped schema's generated parser without completeness checks: the schema's own \
         parse, as the reference reads it (the conformance and equivalence suites).\n",
    );
    out.push_str("pub const GENERATED_SCHEMA_ONLY: &[(&str, ParseToJson)] = &[\n");
    for (name, _) in &entries {
        if CHECKED.iter().any(|(n, _, _)| n == name) {
            let _ = writeln!(out, "    ({name:?}, {name}::schema_only::parse_value),");
        } else {
            let _ = writeln!(out, "    ({name:?}, {name}::parse_value),");
        }
    }
    out.push_str("];\n");
    out.push_str("#[cfg(feature = \"unstable-bench-hooks\")]\n#[doc(hidden)]\n");
    out.push_str("pub const GENERATED_TYPED: &[(&str, ParseTyped)] = &[\n");
    for (name, _) in &entries {
        let _ = writeln!(
            out,
            "    ({name:?}, |text| {name}::parse(text).map(|message| drop(std::hint::black_box(message)))),"
        );
    }
    out.push_str("];\n");
    out.push_str("#[cfg(feature = \"unstable-bench-hooks\")]\n#[doc(hidden)]\n");
    out.push_str(
        "/// Whether each shipped schema's generated parser answers an output on its marker-free \
         path (`parse_marker_free`), for the tests that compare that path with the interpreter.\n",
    );
    out.push_str("pub const MARKER_FREE: &[(&str, TakesMarkerFreePath)] = &[\n");
    for (name, _) in &entries {
        let _ = writeln!(
            out,
            "    ({name:?}, |text| {name}::parse_marker_free(text).is_some()),"
        );
    }
    out.push_str("];\n");
    std::fs::write(out_dir().join("models.rs"), out).expect("OUT_DIR is writable");
}

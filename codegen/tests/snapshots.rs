//! What the macro writes, formatted, so that a reviewer can read it and any change to it shows up
//! in review (`cargo insta review` after an intended change).

use chatparse_runtime::Schema;
use proc_macro2::{Ident, Span};
use quote::quote;

fn generated(name: &str) -> String {
    let path = format!("{}/../schemas/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let schema = Schema::from_json_str_named(&text, &format!("schemas/{name}.json")).unwrap();
    let options = chatparse_codegen::Options {
        module: Ident::new(name, Span::call_site()),
        visibility: quote!(pub),
        include_path: Some(format!("schemas/{name}.json")),
        source_name: format!("schemas/{name}.json"),
        runtime: quote!(::chatparse::runtime),
    };
    let tokens = chatparse_codegen::generate(&schema, &text, &options);
    let file: syn::File = syn::parse2(tokens).expect("generated code parses as a Rust file");
    prettyplease::unparse(&file)
}

#[test]
fn gpt_oss() {
    insta::assert_snapshot!(generated("gpt_oss"));
}

#[test]
fn qwen3() {
    insta::assert_snapshot!(generated("qwen3"));
}

/// A marker-free answer after a prefix substitution (`^\s*([^<\s])` → `<think>\1`).
#[test]
fn deepseek_r1() {
    insta::assert_snapshot!(generated("deepseek_r1"));
}

/// A streaming `response_template`: the template embedded, a `Lazy` load, the thin API.
#[test]
fn qwen3_response_template() {
    let path = format!(
        "{}/../response_templates/qwen3.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let source = "response_templates/qwen3.json";
    chatparse_runtime::stream::ResponseTemplate::from_json_str_named(&text, source).unwrap();
    let options = chatparse_codegen::Options {
        module: Ident::new("qwen3", Span::call_site()),
        visibility: quote!(pub),
        include_path: Some(source.to_owned()),
        source_name: source.to_owned(),
        runtime: quote!(::chatparse::runtime),
    };
    let tokens = chatparse_codegen::generate_template(&text, &options);
    let file: syn::File = syn::parse2(tokens).expect("generated code parses as a Rust file");
    insta::assert_snapshot!(prettyplease::unparse(&file));
}

/// Every shipped schema's module imports exactly what it uses (no blanket
/// `allow(unused_imports)`): each imported name occurs again in the module.
#[test]
fn imports_are_exactly_those_used() {
    let dir = format!("{}/../schemas", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            (path.extension()? == "json").then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 28);
    for name in names {
        let code = generated(&name);
        assert!(!code.contains("allow(unused"), "{name}");
        let body: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("use "))
            .collect();
        for line in code.lines().filter(|l| l.trim_start().starts_with("use ")) {
            let imported = line
                .trim()
                .trim_end_matches(';')
                .rsplit(['{', ':'])
                .next()
                .unwrap()
                .trim_end_matches('}');
            for item in imported.split(',').map(str::trim).filter(|i| *i != "self") {
                // A trait is used through its methods.
                let item = if item == "SerializeMap" {
                    "serialize_entry"
                } else {
                    item
                };
                let item = item.rsplit(" as ").next().unwrap();
                let used = body
                    .match_indices(item)
                    .any(|(i, _)| !body[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_'));
                assert!(used, "{name}: `{item}` imported but not used");
            }
        }
    }
}

//! Arbitrary tool lists: for every shipped family a grammar either builds or is refused with a
//! `GrammarError` (never a panic), and a grammar that builds emits GBNF, Lark, the lazy GBNF, the
//! structural tag and the format instruction, naming every tool the choice allows in each.
//!
//! Input: `[selector, choice, tools JSON text...]`: `selector` picks the family (sorted order),
//! `choice` the tool choice and parallelism.
#![no_main]

use chatparse::grammar::{family_names, GrammarSpec, Options, ToolChoice};
use chatparse::Value;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [selector, choice, rest @ ..] = data else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let Ok(tools) = chatparse::value::from_str(text) else {
        return;
    };
    let mut families: Vec<&str> = family_names();
    families.sort_unstable();
    let family = families[*selector as usize % families.len()];
    let first_name = tools
        .as_array()
        .and_then(|t| t.first())
        .and_then(|t| t.get("function").or(Some(t)))
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("f")
        .to_owned();
    let tool_choice = match choice % 4 {
        0 => ToolChoice::Auto,
        1 => ToolChoice::Required,
        2 => ToolChoice::None,
        _ => ToolChoice::Named(first_name),
    };
    let options = Options {
        tool_choice,
        parallel: choice & 4 == 0,
    };
    let Ok(grammar) = GrammarSpec::new(family, &tools, &options) else {
        return;
    };
    let gbnf = grammar.gbnf();
    let lark = grammar.lark();
    let tag = grammar.structural_tag().to_string();
    let instruction = grammar.format_instruction();
    let lazy = grammar.llama_cpp();
    if !matches!(options.tool_choice, ToolChoice::None) {
        // Every tool the choice allows: all of them, or the named one.
        let allowed = |name: &str| match &options.tool_choice {
            ToolChoice::Named(only) => name == only,
            _ => true,
        };
        for tool in grammar.tools().iter().filter(|t| allowed(&t.name)) {
            // Names are written as literals, escaped in each syntax: check a plain one.
            if tool
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                assert!(
                    gbnf.contains(&tool.name),
                    "{family}: GBNF lacks {}",
                    tool.name
                );
                assert!(
                    lark.contains(&tool.name),
                    "{family}: Lark lacks {}",
                    tool.name
                );
                assert!(
                    tag.contains(&tool.name),
                    "{family}: tag lacks {}",
                    tool.name
                );
            }
        }
    }
    std::hint::black_box((instruction, lazy));
});

//! AgentScope-style parsers (`chatparse::parsers`): the instructions and parses of the examples
//! in AgentScope's parser documentation (their expected values are the documentation's, but for
//! the instructions' whitespace, which is the `agentscope` 0.1.6 package's: a space before the
//! line break that the documentation does not show); the grammars are judged by the engines in
//! `tests/grammar.rs`; `tests/agentscope.rs` compares everything with the package itself.

use chatparse::json;
use chatparse::parsers::{
    MarkdownCodeBlockParser, MarkdownJsonParser, MultiTaggedContentParser, ParserError,
    TaggedContent,
};

pub fn werewolf() -> MultiTaggedContentParser {
    MultiTaggedContentParser::new(vec![
        TaggedContent::new("thought", "[THOUGHT]", "what you thought", "[/THOUGHT]"),
        TaggedContent::new("speak", "[SPEAK]", "what you speak", "[/SPEAK]"),
        TaggedContent::new(
            "finish_discussion",
            "[FINISH_DISCUSSION]",
            "true/false, whether the discussion is finished",
            "[/FINISH_DISCUSSION]",
        )
        .parse_json(),
    ])
}

pub const WEREWOLF_OUTPUT: &str = "As a werewolf, I should keep pretending to be a villager
[THOUGHT]The others didn't realize I was a werewolf. I should end the discussion soon.[/THOUGHT]
[SPEAK]I agree with you.[/SPEAK]
[FINISH_DISCUSSION]true[/FINISH_DISCUSSION]
";

#[test]
fn multi_tagged_content() {
    let parser = werewolf();
    assert_eq!(
        parser.format_instruction(),
        "Respond with specific tags as outlined below, and the content between [FINISH_DISCUSSION] and [/FINISH_DISCUSSION] MUST be a JSON object:
[THOUGHT]what you thought[/THOUGHT]
[SPEAK]what you speak[/SPEAK]
[FINISH_DISCUSSION]true/false, whether the discussion is finished[/FINISH_DISCUSSION]"
    );
    let parsed = parser.parse(WEREWOLF_OUTPUT).unwrap();
    assert_eq!(
        chatparse::Value::Object(parsed),
        json!({
            "thought": "The others didn't realize I was a werewolf. I should end the discussion soon.",
            "speak": "I agree with you.",
            "finish_discussion": true
        })
    );
    assert_eq!(
        parser.parse("[THOUGHT]x[/THOUGHT]"),
        // Both tags of the pair: without `[SPEAK]`, `[/SPEAK]` is looked for from the start.
        Err(ParserError::TagNotFound(vec![
            "[SPEAK]".into(),
            "[/SPEAK]".into()
        ]))
    );
    assert!(matches!(
        parser.parse(&WEREWOLF_OUTPUT.replace("]true[", "]maybe[")),
        Err(ParserError::Json(_))
    ));
    let plain = MultiTaggedContentParser::new(vec![TaggedContent::new("a", "<a>", "A", "</a>")]);
    assert_eq!(
        plain.format_instruction(),
        "Respond with specific tags as outlined below: \n<a>A</a>"
    );
}

#[test]
fn markdown_code_block() {
    let parser = MarkdownCodeBlockParser::new("python", "your python code");
    assert_eq!(
        parser.format_instruction(),
        "You should generate python code in a python fenced code block as follows: \n```python\nyour python code\n```"
    );
    let text = "The following is generated python code\n```python\nprint(\"Hello world!\")\n```\n";
    assert_eq!(
        parser.parse(text).unwrap().trim(),
        "print(\"Hello world!\")"
    );
    assert_eq!(
        parser.parse("```python\nx = 1\n"),
        Err(ParserError::TagNotFound(vec!["```".into()]))
    );
}

#[test]
fn markdown_json() {
    let parser = MarkdownJsonParser::object("{A list of numbers.}");
    assert_eq!(
        parser.format_instruction(),
        "You should respond a json object in a json fenced code block as follows:\n```json\n{A list of numbers.}\n```"
    );
    let text = "Yes, here is the generated list\n```json\n[1,2,3,4,5]\n```\n";
    assert_eq!(parser.parse(text).unwrap(), json!([1, 2, 3, 4, 5]));
    let dict = MarkdownJsonParser::dict(
        &json!({"thought": "what you thought", "speak": "what you speak"}),
        &["thought", "speak"],
    );
    assert!(dict
        .format_instruction()
        .contains("\"speak\": \"what you speak\""));
    let ok = "```json\n{\"thought\": \"t\", \"speak\": \"s\"}\n```";
    assert_eq!(
        dict.parse(ok).unwrap(),
        json!({"thought": "t", "speak": "s"})
    );
    assert_eq!(
        dict.parse("```json\n{\"thought\": \"t\"}\n```"),
        Err(ParserError::MissingKeys(vec!["speak".into()]))
    );
    assert!(dict.parse("```json\n[1]\n```").is_err());
}

//! Embedding a parser for your own response schema: `cargo run --example embed`.
//!
//! `response_parser!` reads `examples/embed/weather_bot.json` (relative to this crate's
//! `CARGO_MANIFEST_DIR`) at build time, validates it — a broken schema is a compile error naming
//! the file, the JSON pointer, the problem and the fix — and generates the module `weather_bot`
//! with a typed `parse`. Editing the schema rebuilds this example.

use std::borrow::Cow;

chatparse::response_parser!(mod weather_bot = "examples/embed/weather_bot.json");

/// What the model generated, decoded with its special tokens.
const OUTPUT: &str = r#"<think>
The user wants the weekend forecast for Oslo, and asked about air quality too. Two tools.
</think>

Let me check the forecast and the air quality in Oslo.
<tool_call>
{"name": "get_forecast", "arguments": {"city": "Oslo", "days": 2, "unit": "celsius"}}
</tool_call>
<tool_call>
{"name": "get_air_quality", "arguments": {"city": "Oslo", "pollutants": ["pm2_5", "no2"]}}
</tool_call><|im_end|>"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let message: weather_bot::Response<'_> = weather_bot::parse(OUTPUT)?;

    // `const` properties are associated constants, not fields.
    println!("role: {}", weather_bot::Response::ROLE);

    // Always an unmodified slice of the input: `&str` borrowed from OUTPUT, no copy.
    let thinking: Option<&str> = message.thinking;
    println!("thinking: {}", thinking.unwrap_or("(none)"));
    if let Some(content) = message.content {
        let offset = content.as_ptr() as usize - OUTPUT.as_ptr() as usize;
        println!("content (bytes {offset}.. of the output): {content}");
    }

    // Tool calls: a `Vec` of generated structs. Values from parsed JSON are `Cow<str>` (owned:
    // JSON unescapes), integers are `chatparse::runtime::Int` (Python ints are unbounded), and a key that
    // may be absent or null in the JSON is `Option<Option<T>>` (absent / null).
    let calls: &[weather_bot::ToolCall<'_>] = message.tool_calls.as_deref().unwrap_or_default();
    for (i, call) in calls.iter().enumerate() {
        let Some(Some(function)) = &call.function else {
            continue;
        };
        let name: Option<&Cow<'_, str>> = function.name.as_ref();
        println!(
            "tool call {i} ({}): {}",
            weather_bot::ToolCall::TYPE,
            name.map_or("?", |n| n.as_ref())
        );
        if let Some(Some(args)) = &function.arguments {
            if let Some(Some(city)) = &args.city {
                println!("  city: {city}");
            }
            if let Some(Some(days)) = &args.days {
                println!("  days: {}", days.as_i64().unwrap_or_default());
            }
            // Keys the schema does not list pass through as JSON, in input order.
            for (key, value) in &args.additional_properties {
                println!("  {key}: {value}");
            }
        }
    }

    // The message serializes to exactly the JSON the reference parser returns (key order,
    // integers vs floats), and `parse_value` returns that JSON directly.
    println!("{}", serde_json::to_string_pretty(&message)?);
    assert_eq!(message.to_value(), weather_bot::parse_value(OUTPUT)?);

    // The schema text is embedded too: the interpreter agrees with the generated parser.
    let interpreted = chatparse::Schema::from_json_str(weather_bot::SCHEMA)?.parse(OUTPUT)?;
    assert_eq!(message.to_value(), interpreted);
    Ok(())
}

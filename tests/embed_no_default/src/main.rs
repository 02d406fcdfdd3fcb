//! A tiny embedding crate: one parser generated from `examples/embed/weather_bot.json`, one parse.
//! It depends on chatparse with `default-features = false`, so none of the shipped models
//! (`chatparse::models`) is compiled.

chatparse::response_parser!(mod weather_bot = "../../examples/embed/weather_bot.json");

const OUTPUT: &str = "<think>\nOne tool.\n</think>\n\nChecking.\n<tool_call>\n\
{\"name\": \"get_forecast\", \"arguments\": {\"city\": \"Oslo\", \"days\": 2}}\n</tool_call><|im_end|>";

fn main() -> Result<(), chatparse::ParseError> {
    let message = weather_bot::parse(OUTPUT)?;
    println!("{}", message.to_value());
    Ok(())
}

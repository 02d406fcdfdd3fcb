// A chat template whose calls are a bare name and JSON, with no marker to tell them from
// content: no faithful parser can be derived, and the reason is the compile error.
chatparse::response_parser!(chat_template = "tests/compile_fail/schemas/bare_calls.jinja");

fn main() {}

// Only `chat_template = "…"` or a path literal names the file.
chatparse::response_parser!(template = "tests/compile_fail/schemas/bare_calls.jinja");

fn main() {}

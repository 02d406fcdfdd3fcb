// `stream` on a schema whose `content` is everything after `</think>`: not a literal-delimited
// region, so it cannot stream.
chatparse::response_parser!("tests/compile_fail/schemas/not_streamable.json", stream);

fn main() {}

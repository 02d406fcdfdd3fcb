// A misspelled option.
chatparse::response_parser!("tests/compile_fail/schemas/pass_stream.json", streaming);

fn main() {}

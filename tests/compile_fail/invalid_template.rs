// A response_template (the streaming format) is validated like a schema: every problem is its
// own error naming the file and the JSON pointer (a misspelled key, a look-around delimiter that
// cannot be matched incrementally, an unknown content parser).
chatparse::response_parser!("tests/compile_fail/schemas/invalid_template.json");

fn main() {}
